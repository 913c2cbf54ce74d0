import HTTPServer
import Postgres

/// Monthly budgets as a typed resource: `/budgets` and `/budgets/:id`, and under a category (docs/api.md, Months).
struct Budgets: CategoryChild {
    static let collection = "budgets"
    static let recordName = "budget"
    static let shape = BudgetRecord.shape
    static let alias = "b"

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> BudgetFields {
        try BudgetFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: BudgetFields) -> Int64? { fields.id }

    static func insert(_ fields: BudgetFields, clock: CivilClock) -> Query { BudgetQueries.insert(fields) }
    static func replace(id: Int64, with fields: BudgetFields, clock: CivilClock) -> Query { BudgetQueries.replace(id: id, with: fields) }
    static func update(id: Int64, with fields: BudgetFields) -> Query { BudgetQueries.update(id: id, with: fields) }
    static func seedInsert(_ record: SeedRecord<BudgetFields>, clock: CivilClock) -> Query { BudgetQueries.seedInsert(record) }

    /// The collection and its records, and a category's budgets under it.
    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Budgets>(clock: clock).register(in: &router)
        CategoryBudgetRoutes(clock: clock).register(in: &router)
    }
}

/// `/categories/:id/budgets` (a category's budgets, and creating one) and `/categories/:id/budgets/:month`
/// (the month's budget: read, set, or remove to fall back to the category's amount).
struct CategoryBudgetRoutes: Sendable {
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        router.get("/categories/:id/budgets") { request, database in try await list(request, database: database) }
        router.post("/categories/:id/budgets") { request, database in try await create(request, database: database) }
        router.get("/categories/:id/budgets/:month") { request, database in try await find(request, database: database) }
        router.put("/categories/:id/budgets/:month") { request, database in try await set(request, database: database) }
        router.delete("/categories/:id/budgets/:month") { request, database in try await delete(request, database: database) }
    }

    /// The category's budgets, through the query language; 404 without the category.
    func list(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        let source = try Budgets.listSource(for: request, clock: clock)
        return try await database.list(
            try ListAnswer(request: request, source: source), from: source, scope: "b.category_id = \(categoryID)",
            owner: (CategoryQueries.exists(id: categoryID), APIError.notFound(resource: Categories.recordName, id: categoryID)))
    }

    /// The path names the category, so the body need not; a missing category is a 404 of the path.
    func create(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        return try await missingCategoryIsNotFound(categoryID) {
            try await RecordRoutes<Budgets>(clock: clock).create(request, database: database) { members, prefix in
                try BudgetFields(members, mode: .complete, categoryIDFromPath: categoryID, fieldPrefix: prefix)
            }
        }
    }

    func find(_ request: Request, database: Database) async throws -> Response {
        let (categoryID, month) = try Self.path(request)
        guard let record = try await database.snapshotJSON(.plain(BudgetQueries.find(categoryID: categoryID, month: month), Budgets.shape.record)) else {
            throw BudgetError.noBudget(categoryID: categoryID, month: month)
        }
        return .json(record)
    }

    /// PUT `{"amount": …}`: 201 when the month had no budget of its own, 200 when its amount is replaced.
    func set(_ request: Request, database: Database) async throws -> Response {
        let (categoryID, month) = try Self.path(request)
        let fields = try BudgetFields(
            try RequestBody.object(request), mode: .complete, categoryIDFromPath: categoryID, monthFromPath: month)
        return try await missingCategoryIsNotFound(categoryID) {
            guard let record = try await database.write(
                BudgetQueries.set(categoryID: categoryID, month: month, amount: fields.amount), rendering: Budgets.shape.record)
            else { preconditionFailure("INSERT … ON CONFLICT … RETURNING answered no row") }
            return record.isCreated ? RecordRoutes<Budgets>(clock: clock).created(record) : .json(record.json)
        }
    }

    /// DELETE: the month goes back to the category's amount; answers the budget that was removed.
    func delete(_ request: Request, database: Database) async throws -> Response {
        let (categoryID, month) = try Self.path(request)
        guard let record = try await database.write(BudgetQueries.delete(categoryID: categoryID, month: month), rendering: Budgets.shape.record) else {
            throw BudgetError.noBudget(categoryID: categoryID, month: month)
        }
        return .json(record.json)
    }

    /// The category id and month of `/categories/:id/budgets/:month` (400 for either malformed).
    static func path(_ request: Request) throws -> (categoryID: Int64, month: Month) {
        let categoryID = try recordID(request)
        let text = request.parameters["month"] ?? ""
        guard let month = Month(text) else {
            throw APIError.malformedPath("'\(text)' is not a month; a budget's month is written YYYY-MM (01 to 12)")
        }
        return (categoryID, month)
    }

    /// Runs a write that names the path's category; a category that does not exist is a 404 of the path.
    private func missingCategoryIsNotFound(_ categoryID: Int64, _ write: () async throws -> Response) async throws -> Response {
        do {
            return try await write()
        } catch let error as PostgresError where error.constraint == "budgets_category_id_fkey" {
            throw APIError.notFound(resource: Categories.recordName, id: categoryID)
        }
    }
}

/// A month without a budget of its own, asked for at `/categories/:id/budgets/:month`.
enum BudgetError: ProblemConvertible {
    case noBudget(categoryID: Int64, month: Month)

    var problem: Problem {
        switch self {
        case .noBudget(let categoryID, let month):
            Problem(.notFound, detail: "category \(categoryID) has no budget of its own for \(month); the month's budget is the category's amount")
        }
    }
}
