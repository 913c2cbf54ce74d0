import BudgetCore
import HTTPServer
import Postgres

/// Monthly budgets as a typed resource: `/budgets` and `/budgets/:id`, and under a category (docs/api.md, Months).
struct Budgets: CategoryChild {
    static let collection = "budgets"
    static let recordName = "budget"
    static let members = BudgetRecord.members
    static let constraints: [ResourceConstraint] = [
        .unique("budgets_category_month_unique", field: "month", detail: "this category already has a budget for this month"),
        .foreignKey("budgets_category_id_fkey", field: "categoryId", references: Categories.self),
    ]

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> BudgetFields {
        try BudgetFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func fields(from members: JSONObject, categoryIDFromPath: Int64, fieldPrefix: String) throws -> BudgetFields {
        try BudgetFields(members, mode: .complete, categoryIDFromPath: categoryIDFromPath, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: BudgetFields) -> Int64? { fields.id }

    /// The collection and its records, and a category's budgets under it.
    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Budgets>(clock: clock).register(in: &router)
        CategoryChildRoutes<Budgets>(clock: clock).register(in: &router)
        MonthBudgetRoutes().register(in: &router)
    }
}

/// `/categories/:id/budgets/:month`: the month's budget, read, set, or removed to fall back to the
/// category's amount (docs/api.md, Months).
struct MonthBudgetRoutes: Sendable {
    func register(in router: inout Router<Database>) {
        router.get("/categories/:id/budgets/:month") { request, database in try await find(request, database: database) }
        router.put("/categories/:id/budgets/:month") { request, database in try await set(request, database: database) }
        router.delete("/categories/:id/budgets/:month") { request, database in try await delete(request, database: database) }
    }

    func find(_ request: Request, database: Database) async throws -> Response {
        let (categoryID, month) = try Self.path(request)
        guard
            let record = try await database.snapshotJSON(
                .plain(BudgetQueries.find(categoryID: categoryID, month: month, in: database.ledger), Budgets.shape.record))
        else {
            throw BudgetError.noBudget(categoryID: categoryID, month: month)
        }
        return .json(record)
    }

    /// PUT `{"amount": …}`: 201 when the month had no budget of its own, 200 when its amount is replaced.
    func set(_ request: Request, database: Database) async throws -> Response {
        let (categoryID, month) = try Self.path(request)
        let fields = try BudgetFields(
            try RequestBody.object(request), mode: .complete, categoryIDFromPath: categoryID, monthFromPath: month)
        return try await CategoryChildRoutes<Budgets>.missingCategoryIsNotFound(categoryID) {
            guard
                let record = try await database.write(
                    BudgetQueries.set(categoryID: categoryID, month: month, amount: fields.amount, in: database.ledger),
                    rendering: Budgets.shape.record)
            else { preconditionFailure("INSERT … ON CONFLICT … RETURNING answered no row") }
            return record.isCreated ? RecordRoutes<Budgets>.created(record) : .json(record.json)
        }
    }

    /// DELETE: the month goes back to the category's amount; answers the budget that was removed.
    func delete(_ request: Request, database: Database) async throws -> Response {
        let (categoryID, month) = try Self.path(request)
        guard
            let record = try await database.write(
                BudgetQueries.delete(categoryID: categoryID, month: month, in: database.ledger), rendering: Budgets.shape.record)
        else {
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
