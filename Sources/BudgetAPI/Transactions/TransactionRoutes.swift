import HTTPServer
import Postgres

/// Transactions as a typed resource: `/transactions` and `/transactions/:id` (docs/api.md).
struct Transactions: CategoryChild {
    static let collection = "transactions"
    static let recordName = "transaction"
    static let shape = TransactionRecord.shape
    static let alias = "t"

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> TransactionFields {
        try TransactionFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: TransactionFields) -> Int64? { fields.id }

    static func insert(_ fields: TransactionFields, clock: CivilClock) -> Query { TransactionQueries.insert(fields, today: clock.today) }
    static func replace(id: Int64, with fields: TransactionFields, clock: CivilClock) -> Query {
        TransactionQueries.replace(id: id, with: fields, today: clock.today)
    }
    static func update(id: Int64, with fields: TransactionFields) -> Query { TransactionQueries.update(id: id, with: fields) }
    static func seedInsert(_ record: SeedRecord<TransactionFields>, clock: CivilClock) -> Query {
        TransactionQueries.seedInsert(record, today: clock.today)
    }

    /// The collection and its records, and a category's transactions under it.
    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Transactions>(clock: clock).register(in: &router)
        CategoryTransactionRoutes(clock: clock).register(in: &router)
    }
}

/// `/categories/:id/transactions`: one category's transactions, and creating one under it (docs/api.md).
struct CategoryTransactionRoutes: Sendable {
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        router.get("/categories/:id/transactions") { request, database in try await list(request, database: database) }
        router.post("/categories/:id/transactions") { request, database in try await create(request, database: database) }
    }

    /// The category's transactions, through the same query language as `/transactions`; 404 without the category.
    func list(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        let source = try Transactions.listSource(for: request, clock: clock)
        let answer = try ListAnswer(request: request, source: source)
        return try await database.list(
            answer, from: source, scope: "t.category_id = \(categoryID)",
            owner: (CategoryQueries.exists(id: categoryID), APIError.notFound(resource: Categories.recordName, id: categoryID))
        )
    }

    /// The path names the category, so the body need not; a missing category is a 404 of the path.
    func create(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        do {
            return try await RecordRoutes<Transactions>(clock: clock).create(request, database: database) { members, prefix in
                try TransactionFields(members, mode: .complete, categoryIDFromPath: categoryID, fieldPrefix: prefix)
            }
        } catch let error as PostgresError where error.constraint == "transactions_category_id_fkey" {
            throw APIError.notFound(resource: Categories.recordName, id: categoryID)
        }
    }
}
