/// The filterable fields of the typed budget resources, named as their JSON names them (docs/api.md).
///
/// The SQL assumes the aliases of `CategoryQueries` (`c` for the category row, `b` for its balance) and of
/// `TransactionQueries` (`t`); a list query built from these catalogs must select from those aliases.
extension ColumnCatalog {
    static let categories = ColumnCatalog(
        recordName: "category",
        columns: [
            Column(name: "id", sql: "c.id", type: .integer),
            Column(name: "title", sql: "c.title", type: .text),
            Column(name: "amount", sql: "c.amount", type: .money),
            Column(name: "spent", sql: "b.spent", type: .money),
            Column(name: "remaining", sql: "(c.amount - b.spent)", type: .money),
            Column(name: "createdAt", sql: "c.created_at", type: .timestamp),
            Column(name: "updatedAt", sql: "c.updated_at", type: .timestamp),
            Column(name: "version", sql: "c.version", type: .integer),
        ],
        searchable: ["title"]
    )

    static let transactions = ColumnCatalog(
        recordName: "transaction",
        columns: [
            Column(name: "id", sql: "t.id", type: .integer),
            Column(name: "categoryId", sql: "t.category_id", type: .integer),
            Column(name: "title", sql: "t.title", type: .text),
            Column(name: "amount", sql: "t.amount", type: .money),
            Column(name: "date", sql: "t.date", type: .date),
            Column(name: "note", sql: "t.note", type: .text),
            Column(name: "createdAt", sql: "t.created_at", type: .timestamp),
            Column(name: "updatedAt", sql: "t.updated_at", type: .timestamp),
            Column(name: "version", sql: "t.version", type: .integer),
        ],
        // json-server's q looks in strings and numbers; amounts are searchable as their text, e.g. q=12.50.
        searchable: ["title", "note", "amount"]
    )
}
