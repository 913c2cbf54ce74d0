import BudgetCore
import HTTPServer
import Postgres

/// `GET /months/:month`, `GET /months?from&to` and `GET /reports/spending` (docs/api.md, Months): each one
/// statement, whatever the number of months before.
struct MonthRoutes: Sendable {
    /// What `current` means.
    let clock: CivilClock

    /// What the report answers, JSON first: it wins ties and answers when `Accept` names neither.
    static let reportTypes = ["application/json", "text/csv"]

    func register(in router: inout Router<Database>) {
        router.get("/months") { request, database in try await summaries(request, database: database) }
        router.get("/months/:month") { request, database in try await month(request, database: database) }
        router.get("/reports/spending") { request, database in try await spending(request, database: database) }
    }

    /// `{month, budgeted, spent, carried, remaining, income, uncategorised, toBeBudgeted, scheduled, categories: [...]}`:
    /// the totals over the categories, the budget's income (docs/accounts.md), and each category as
    /// `GET /categories?month=` answers it, by id.
    func month(_ request: Request, database: Database) async throws -> Response {
        let choice = try MonthChoice(request.parameters["month"] ?? "", parameter: "month")
        let result = try await database.query(MonthQueries.month(choice.sql(clock), in: database.ledger))
        var body = MonthQueries.summary.json(result[0], from: 0)
        body.removeLast()  // the summary's closing brace: the categories go inside it
        body += #","categories":"#.utf8
        body += CategoryRecord.monthShape.record.jsonArray(result, from: MonthQueries.monthRecordColumn)
        body.append(UInt8(ascii: "}"))
        var response = Response.json(body)
        response.syncSeq = try result[0].decode(Int64.self, at: MonthQueries.positionColumn)
        return response
    }

    /// One summary per month from `from` to `to`, oldest first.
    func summaries(_ request: Request, database: Database) async throws -> Response {
        let range = try MonthRange(request)
        let result = try await database.query(MonthQueries.summaries(range, in: database.ledger))
        var response = Response.json(JSONArray.joining(result.map { MonthQueries.summary.json($0, from: 0) }))
        response.syncSeq = try result[0].decode(Int64.self, at: MonthQueries.positionColumn)
        return response
    }

    /// `{categoryId, month, spent, count}` per category and month, zero months included, as JSON or, with
    /// `Accept: text/csv`, as CSV with a header row (RFC 4180).
    func spending(_ request: Request, database: Database) async throws -> Response {
        let range = try MonthRange(request)
        var categoryID: Int64?
        if let text = request.queryValue("categoryId") {
            guard let id = Int64(text), id > 0 else {
                throw APIError.invalidParameter("categoryId", "must be a category id (a positive integer); it was '\(text)'")
            }
            categoryID = id
        }
        let result = try await database.query(MonthQueries.spending(range, categoryID: categoryID, in: database.ledger))
        if let categoryID, try !result[0].decode(Bool.self, at: 1) {
            throw APIError.notFound(resource: Categories.recordName, id: categoryID)
        }
        var response: Response
        if request.preferredMediaType(among: Self.reportTypes) == CSVText.mediaType {
            response = Response(status: .ok, headers: ["Content-Type": CSVText.contentType], body: MonthQueries.spendingRow.csv(result, from: 2))
        } else {
            response = Response.json(MonthQueries.spendingRow.jsonArray(result, from: 2))
        }
        // RFC 9110 §12.5.5: the representation depends on Accept.
        response.headers.add("Vary", "Accept")
        response.syncSeq = try result[0].decode(Int64.self, at: 0)
        return response
    }
}
