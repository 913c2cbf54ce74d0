import HTTPServer
import Postgres

/// Transactions as a typed resource: `/transactions` and `/transactions/:id` (docs/api.md).
struct Transactions: TypedResource {
    static let collection = "transactions"
    static let recordName = "transaction"

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> TransactionFields {
        try TransactionFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: TransactionFields) -> Int64? { fields.id }

    static let catalog = ColumnCatalog.transactions
    static let listSource: Query = "transactions t"
    static let defaultOrder: Query = "t.id"

    static let record = TransactionQueries.record

    static func listElement(for request: Request) throws -> ListElement {
        try expandsCategory(request) ? .rendered(TransactionQueries.json(expandingCategory: true)) : .plain(record)
    }

    static func find(id: Int64, for request: Request) throws -> RecordRead {
        try expandsCategory(request) ? .rendered(TransactionQueries.find(id: id, expandingCategory: true)) : .plain(TransactionQueries.find(id: id), record)
    }

    static func insert(_ fields: TransactionFields) -> Query { TransactionQueries.insert(fields) }
    static func replace(id: Int64, with fields: TransactionFields) -> Query { TransactionQueries.replace(id: id, with: fields) }
    static func update(id: Int64, with fields: TransactionFields) -> Query { TransactionQueries.update(id: id, with: fields) }
    static func delete(id: Int64) -> Query { TransactionQueries.delete(id: id) }

    /// `_expand=category` nests each transaction's category, as json-server's `_expand` does.
    private static func expandsCategory(_ request: Request) throws -> Bool {
        try request.relationNames("_expand", allowed: ["category"]).contains("category")
    }
}

/// `/categories/:id/transactions`: one category's transactions, and creating one under it (docs/api.md).
struct CategoryTransactionRoutes: Sendable {
    func register(in router: inout Router<Database>) {
        router.get("/categories/:id/transactions") { request, database in try await list(request, database: database) }
        router.post("/categories/:id/transactions") { request, database in try await create(request, database: database) }
    }

    /// The category's transactions, through the same query language as `/transactions`; 404 without the category.
    func list(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        let answer = try ListAnswer(request: request, catalog: Transactions.catalog, maxRows: database.streams.maxRows)
        let target = ListTarget(
            element: try Transactions.listElement(for: request), source: Transactions.listSource,
            scope: "t.category_id = \(categoryID)", tieBreak: Transactions.defaultOrder,
            owner: ListOwner(exists: CategoryQueries.exists(id: categoryID), missing: APIError.notFound(resource: Categories.recordName, id: categoryID)))
        return try await database.list(answer, target)
    }

    /// The path names the category, so the body need not; a missing category is a 404 of the path.
    func create(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        do {
            return try await RecordRoutes<Transactions>().create(request, database: database) { members, prefix in
                try TransactionFields(members, mode: .complete, categoryIDFromPath: categoryID, fieldPrefix: prefix)
            }
        } catch let error as PostgresError where error.constraint == "transactions_category_id_fkey" {
            throw APIError.notFound(resource: Categories.recordName, id: categoryID)
        }
    }
}
