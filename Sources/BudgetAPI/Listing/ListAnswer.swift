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

    /// The list statement (see `ListPlan.selectPage`).
    func statement(element: Query, from source: String, scope: Query, tieBreak: String, ownerExists: Query?) -> Query {
        plan.selectPage(element: element, from: source, scope: scope, tieBreak: tieBreak, ownerExists: ownerExists ?? "TRUE")
    }

    /// Runs the list statement on `connection`, inside the caller's transaction when the plan needs one (see
    /// `needsTransaction`), and builds the response.
    func response(
        element: Query, from source: String, scope: Query, tieBreak: String,
        owner: (exists: Query, missing: any Error)? = nil, on connection: Connection
    ) throws -> Response {
        if plan.usesPatterns {
            // SET LOCAL ends with the caller's transaction, so the pooled connection gets its default back.
            try connection.execute(script: "SET LOCAL statement_timeout = '\(Self.patternTimeout)'")
        }
        let statement = statement(element: element, from: source, scope: scope, tieBreak: tieBreak, ownerExists: owner?.exists)
        return try response(from: connection.query(statement), missingOwner: owner?.missing)
    }

    /// Builds the response around the JSON in the statement's row; throws `missingOwner` when the row says
    /// the owner does not exist.
    func response(from result: QueryResult, missingOwner: (any Error)?) throws -> Response {
        let row = result[0]
        if let missingOwner, try !row.decode(Bool.self, at: 3) { throw missingOwner }
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
    /// Answers a list with one statement; in a transaction only when the plan needs one, else on the event
    /// loop's own connection (`Database.query`).
    func list(
        _ answer: ListAnswer, element: String, from source: String, scope: Query = "TRUE", tieBreak: String,
        owner: (exists: Query, missing: any Error & Sendable)? = nil
    ) async throws -> Response {
        guard !answer.needsTransaction else {
            return try await transaction { connection in
                try answer.response(
                    element: Query(unsafeSQL: element), from: source, scope: scope, tieBreak: tieBreak,
                    owner: owner.map { ($0.exists, $0.missing) }, on: connection)
            }
        }
        let statement = answer.statement(
            element: Query(unsafeSQL: element), from: source, scope: scope, tieBreak: tieBreak, ownerExists: owner?.exists)
        return try answer.response(from: await query(statement), missingOwner: owner?.missing)
    }
}
