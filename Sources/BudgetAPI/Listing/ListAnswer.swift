import HTTPServer
import Postgres

/// A list request planned against a catalog, and its answer: the page of records with `X-Total-Count` and
/// `Link`, or the 1.x envelope (docs/json-server.md, the query language).
struct ListAnswer: Sendable {
    /// How long a list with regular expressions or `q=` may run, so a hostile pattern cannot hold a connection.
    static let patternTimeout = "2s"

    let query: ListQuery
    let plan: ListPlan
    private let url: PageURL

    /// - Parameter ignoring: query parameters that are not the query language's (a list source's own, such as `month`).
    init(request: Request, catalog: some FieldCatalog, ignoring: Set<String> = []) throws {
        query = try ListQuery.parse(ignoring.isEmpty ? request.query : request.query.filter { !ignoring.contains($0.name) })
        plan = try ListPlan(query, catalog: catalog)
        url = PageURL(request)
    }

    /// A typed list: the query language over the source's members, without the parameters the source took.
    init(request: Request, source: ListSource) throws {
        try self.init(request: request, catalog: source.shape.catalog, ignoring: source.parameters)
    }

    /// Whether the statement must run inside a transaction, for its `SET LOCAL statement_timeout`.
    var needsTransaction: Bool { plan.usesPatterns }

    /// The list statement: `ListPlan.selectRows` for plain records, else `ListPlan.selectPage`.
    func statement(element: ListElement, from source: Query, scope: Query, tieBreak: Query, ownerExists: Query?) -> Query {
        switch element {
        case .plain(let record):
            plan.selectRows(columns: record.columns, from: source, scope: scope, tieBreak: tieBreak, ownerExists: ownerExists ?? "TRUE")
        case .rendered(let element):
            plan.selectPage(element: element, from: source, scope: scope, tieBreak: tieBreak, ownerExists: ownerExists ?? "TRUE")
        }
    }

    /// Runs the list statement on `connection`, inside the caller's transaction when the plan needs one (see
    /// `needsTransaction`), and builds the response.
    func response(
        element: ListElement, from source: Query, scope: Query, tieBreak: Query,
        owner: (exists: Query, missing: any Error)? = nil, on connection: Connection
    ) throws -> Response {
        let statement = statement(element: element, from: source, scope: scope, tieBreak: tieBreak, ownerExists: owner?.exists)
        return try response(from: run(statement, on: connection), element: element, missingOwner: owner?.missing)
    }

    /// Runs `statement`, under the short timeout of patterns when the plan has them.
    func run(_ statement: Query, on connection: Connection) throws -> QueryResult {
        if plan.usesPatterns {
            // SET LOCAL ends with the caller's transaction, so the pooled connection gets its default back.
            try connection.execute(script: "SET LOCAL statement_timeout = '\(Self.patternTimeout)'")
        }
        return try connection.query(statement)
    }

    /// Builds the response from what `statement(element:…)` answered; throws `missingOwner` when it says the
    /// owner does not exist.
    func response(from result: QueryResult, element: ListElement, missingOwner: (any Error)?) throws -> Response {
        let row = result[0]
        switch element {
        case .rendered:
            // One row: total, the JSON array, position, ownerExists.
            if let missingOwner, try !row.decode(Bool.self, at: 3) { throw missingOwner }
            return try response(
                total: row.decode(Int64.self, at: 0), syncSeq: row.decode(Int64.self, at: 2),
                records: row.bytes(at: 1) ?? Array("[]".utf8))
        case .plain(let record):
            // A row per record: total, position, ownerExists, then the record's columns.
            if let missingOwner, try !row.decode(Bool.self, at: 2) { throw missingOwner }
            return try response(
                total: row.decode(Int64.self, at: 0), syncSeq: row.decode(Int64.self, at: 1),
                records: record.jsonArray(result, from: 3))
        }
    }

    private func response(total: Int64, syncSeq: Int64, records: [UInt8]) -> Response {
        let total = Int(total)
        var response = Response.json(ListResponse.body(total: total, pagination: plan.pagination, data: records))
        response.syncSeq = syncSeq
        for header in ListResponse.headers(total: total, pagination: plan.pagination, url: url) {
            response.headers.replaceOrAdd(header.name, header.value)
        }
        return response
    }
}

/// What a list answers per record: plain columns that Swift renders, or JSON that SQL rendered.
///
/// Typed lists are plain but for `_embed`/`_expand`, rare enough to leave in SQL with their nested records;
/// generic collections pass their stored JSON through.
enum ListElement: Sendable {
    case plain(PlainRecord)
    /// SQL for one record's JSON over the list's source, e.g. `d.body`; bound values welcome.
    case rendered(Query)
}

extension Database {
    /// Answers a typed list with one statement (see the other `list`).
    func list(
        _ answer: ListAnswer, from source: ListSource, scope: Query = "TRUE",
        owner: (exists: Query, missing: any Error & Sendable)? = nil
    ) async throws -> Response {
        try await list(answer, element: source.element, from: source.from, scope: scope, tieBreak: source.tieBreak, owner: owner)
    }

    /// Answers a list with one statement; in a transaction only when the plan needs one, else on the event
    /// loop's own connection (`Database.query`).
    func list(
        _ answer: ListAnswer, element: ListElement, from source: Query, scope: Query = "TRUE", tieBreak: Query,
        owner: (exists: Query, missing: any Error & Sendable)? = nil
    ) async throws -> Response {
        let statement = answer.statement(element: element, from: source, scope: scope, tieBreak: tieBreak, ownerExists: owner?.exists)
        let result = try await answer.needsTransaction
            ? transaction { connection in try answer.run(statement, on: connection) }
            : query(statement)
        return try answer.response(from: result, element: element, missingOwner: owner?.missing)
    }
}
