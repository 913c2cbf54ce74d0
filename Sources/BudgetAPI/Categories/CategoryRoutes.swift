import HTTPServer
import Postgres

/// Budget categories as a typed resource: `/categories` and `/categories/:id` (docs/api.md).
struct Categories: TypedResource {
    static let collection = "categories"
    static let recordName = "category"

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> CategoryFields {
        try CategoryFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: CategoryFields) -> Int64? { fields.id }

    static let catalog = ColumnCatalog.categories
    static let listSource = CategoryQueries.source
    static let defaultOrder: Query = "c.id"

    static let record = CategoryQueries.record

    static func listElement(for request: Request) throws -> ListElement {
        try embedsTransactions(request) ? .rendered(CategoryQueries.json(embeddingTransactions: true)) : .plain(record)
    }

    static func find(id: Int64, for request: Request) throws -> RecordRead {
        try embedsTransactions(request) ? .rendered(CategoryQueries.find(id: id, embeddingTransactions: true)) : .plain(CategoryQueries.find(id: id), record)
    }

    static func insert(_ fields: CategoryFields) -> Query { CategoryQueries.insert(fields) }
    static func replace(id: Int64, with fields: CategoryFields) -> Query { CategoryQueries.replace(id: id, with: fields) }
    static func update(id: Int64, with fields: CategoryFields) -> Query { CategoryQueries.update(id: id, with: fields) }
    static func delete(id: Int64) -> Query { CategoryQueries.delete(id: id) }

    /// `_embed=transactions` nests each category's transactions, as json-server's `_embed` does.
    private static func embedsTransactions(_ request: Request) throws -> Bool {
        try request.relationNames("_embed", allowed: ["transactions"]).contains("transactions")
    }
}

extension Request {
    /// The comma-separated names given to `_embed` or `_expand`, each checked against what this resource has.
    func relationNames(_ parameter: String, allowed: Set<String>) throws -> Set<String> {
        var names: Set<String> = []
        for item in query where item.name == parameter {
            for name in item.value.split(separator: ",").map(String.init) {
                guard allowed.contains(name) else {
                    throw APIError.malformedQuery(
                        "\(parameter)=\(name) is not available here; it takes \(allowed.sorted().joined(separator: ", "))"
                    )
                }
                names.insert(name)
            }
        }
        return names
    }
}
