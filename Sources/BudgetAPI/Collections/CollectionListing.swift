import HTTPServer
import Postgres

/// How a list request on a generic collection is answered: the query language of SPEC §4 over `documents.doc`.
///
/// Filters, sorting and pages come from `Listing/` (every generic field is a bound jsonb path); without them
/// the records come in creation order, as json-server keeps its arrays.
struct CollectionListing: Sendable {
    /// How long a list with regular expressions or `q=` may run, so a hostile pattern cannot hold a connection.
    static let patternTimeout = "2s"

    private let plan: ListPlan
    private let url: PageURL

    init(request: Request) throws {
        let query = try ListQuery.parse(request.query)
        plan = try ListPlan(query, catalog: DocumentCatalog(column: "d.doc"))
        url = PageURL(request)
    }

    /// The records of `collection` that the query picks.
    func response(listing collection: String, on connection: Connection) throws -> Response {
        try response(scope: "d.collection = \(collection)", on: connection)
    }

    /// The records of `collection` whose `field` names `parent` (a nested route's children).
    func response(children collection: String, of parent: DocumentID, field: String, on connection: Connection) throws -> Response {
        try response(scope: "d.collection = \(collection) AND \(DocumentQueries.references(parent, field: field))", on: connection)
    }

    private func response(scope: Query, on connection: Connection) throws -> Response {
        if plan.usesPatterns {
            // SET LOCAL ends with the caller's transaction, so the pooled connection gets its default back.
            try connection.execute(script: "SET LOCAL statement_timeout = '\(Self.patternTimeout)'")
        }
        let row = try connection.query(plan.selectPage(element: "d.body", from: "documents d", scope: scope, tieBreak: "d.position"))[0]
        let total = Int(try row.decode(Int64.self, at: 0))
        var response = Response.json(ListResponse.body(total: total, pagination: plan.pagination, data: row.bytes(at: 1) ?? Array("[]".utf8)))
        for header in ListResponse.headers(total: total, pagination: plan.pagination, url: url) {
            response.headers.replaceOrAdd(header.name, header.value)
        }
        return response
    }
}
