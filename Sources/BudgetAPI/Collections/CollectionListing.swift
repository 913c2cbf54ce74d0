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
    /// `_embed` and `_expand` names, resolved against the collections once a connection is at hand.
    private let embeds: [String]
    private let expands: [String]

    init(request: Request) throws {
        let query = try ListQuery.parse(request.query)
        plan = try ListPlan(query, catalog: DocumentCatalog(column: "d.doc"))
        url = PageURL(request)
        (embeds, expands) = (query.embeds, query.expands)
    }

    /// The records of `collection` that the query picks.
    func response(listing collection: String, on connection: Connection) throws -> Response {
        try response(collection, scope: Self.scope(listing: collection), on: connection)
    }

    /// The records of `collection` whose `field` names `parent` (a nested route's children).
    func response(children collection: String, of parent: DocumentID, field: String, on connection: Connection) throws -> Response {
        let scope: Query = "d.collection = \(collection) AND \(DocumentQueries.references(parent, field: field))"
        return try response(collection, scope: scope, on: connection)
    }

    /// The statement a list runs: the plan's page of the rows in `scope`, each with `relations` appended.
    func statement(scope: Query, relations: [DocumentRelation]) -> Query {
        plan.selectPage(element: DocumentQueries.body(with: relations), from: "documents d", scope: scope, tieBreak: "d.position")
    }

    /// The rows of a plain (not nested) list of `collection`.
    static func scope(listing collection: String) -> Query {
        "d.collection = \(collection)"
    }

    private func response(_ collection: String, scope: Query, on connection: Connection) throws -> Response {
        let relations = try DocumentStore(connection: connection).relations(embeds: embeds, expands: expands, on: collection)
        if plan.usesPatterns {
            // SET LOCAL ends with the caller's transaction, so the pooled connection gets its default back.
            try connection.execute(script: "SET LOCAL statement_timeout = '\(Self.patternTimeout)'")
        }
        let row = try connection.query(statement(scope: scope, relations: relations))[0]
        let total = Int(try row.decode(Int64.self, at: 0))
        var response = Response.json(ListResponse.body(total: total, pagination: plan.pagination, data: row.bytes(at: 1) ?? Array("[]".utf8)))
        for header in ListResponse.headers(total: total, pagination: plan.pagination, url: url) {
            response.headers.replaceOrAdd(header.name, header.value)
        }
        return response
    }
}
