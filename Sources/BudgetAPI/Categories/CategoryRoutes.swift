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

    static let shape = CategoryQueries.shape
    static let table: Query = "categories c"
    static let source = CategoryQueries.source
    static let idColumn: Query = "c.id"

    static func listSource(for request: Request) throws -> ListSource {
        var source = plainSource
        if try embedsTransactions(request) { source.element = .rendered(CategoryQueries.json(embeddingTransactions: true)) }
        return source
    }

    static func find(id: Int64, for request: Request) throws -> RecordRead {
        try embedsTransactions(request) ? .rendered(CategoryQueries.find(id: id, embeddingTransactions: true)) : .plain(find(id: id), shape.record)
    }

    static func insert(_ fields: CategoryFields) -> Query { CategoryQueries.insert(fields) }
    static func replace(id: Int64, with fields: CategoryFields) -> Query { CategoryQueries.replace(id: id, with: fields) }
    static func update(id: Int64, with fields: CategoryFields) -> Query { CategoryQueries.update(id: id, with: fields) }
    static func delete(id: Int64) -> Query { CategoryQueries.delete(id: id) }
    static func seedInsert(_ record: SeedRecord<CategoryFields>) -> Query { CategoryQueries.seedInsert(record) }

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
