import HTTPServer
import Postgres

/// A list request planned against a catalog, and its answer: the page of records with `X-Total-Count` and
/// `Link`, or the 1.x envelope (SPEC §4).
struct ListAnswer: Sendable {
    /// How long a list with regular expressions or `q=` may run, so a hostile pattern cannot hold a connection.
    static let patternTimeout = "2s"

    let query: ListQuery
    let plan: ListPlan
    private let url: PageURL

    init(request: Request, catalog: some FieldCatalog) throws {
        query = try ListQuery.parse(request.query)
        plan = try ListPlan(query, catalog: catalog)
        url = PageURL(request)
    }

    /// Whether the statement must run inside a transaction, for its `SET LOCAL statement_timeout`.
    var needsTransaction: Bool { plan.usesPatterns }

    /// Runs the list statement (see `ListPlan.selectPage`) and builds the response around PostgreSQL's JSON;
    /// throws `missingOwner` when `ownerExists` is false.
    func response(
        element: Query, from source: String, scope: Query, tieBreak: String,
        owner: (exists: Query, missing: any Error)? = nil, on connection: Connection
    ) throws -> Response {
        if plan.usesPatterns {
            // SET LOCAL ends with the caller's transaction, so the pooled connection gets its default back.
            try connection.execute(script: "SET LOCAL statement_timeout = '\(Self.patternTimeout)'")
        }
        let statement = plan.selectPage(
            element: element, from: source, scope: scope, tieBreak: tieBreak, ownerExists: owner?.exists ?? "TRUE")
        let row = try connection.query(statement)[0]
        if let owner, try !row.decode(Bool.self, at: 3) { throw owner.missing }
        let total = Int(try row.decode(Int64.self, at: 0))
        let records = row.bytes(at: 1) ?? Array("[]".utf8)
        var response = Response.json(ListResponse.body(total: total, pagination: plan.pagination, data: records))
        response.syncSeq = try row.decode(Int64.self, at: 2)
        for header in ListResponse.headers(total: total, pagination: plan.pagination, url: url) {
            response.headers.replaceOrAdd(header.name, header.value)
        }
        return response
    }
}

extension Database {
    /// Answers a list on a pooled connection, in a transaction only when the plan needs one.
    func list(
        _ answer: ListAnswer, element: String, from source: String, scope: Query = "TRUE", tieBreak: String,
        owner: (exists: Query, missing: any Error & Sendable)? = nil
    ) async throws -> Response {
        let run: @Sendable (Connection) throws -> Response = { connection in
            try answer.response(
                element: Query(unsafeSQL: element), from: source, scope: scope, tieBreak: tieBreak,
                owner: owner.map { ($0.exists, $0.missing) }, on: connection)
        }
        return answer.needsTransaction ? try await transaction(run) : try await self.run(run)
    }
}
