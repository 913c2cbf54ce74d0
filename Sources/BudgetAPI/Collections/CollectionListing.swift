import HTTPServer
import Postgres

/// How a list request on a generic collection is answered: the query language of docs/json-server.md over `documents.doc`.
///
/// Filters, sorting and pages come from `Listing/` (every generic field is a bound jsonb path); without them
/// the records come in creation order, as json-server keeps its arrays.
struct CollectionListing: Sendable {
    /// Lists select documents as `d`; creation order breaks ties of `_sort`.
    private static let source: Query = "documents d"
    private static let tieBreak: Query = "d.position"

    private let answer: ListAnswer
    /// The collection whose records are listed.
    private let collection: String
    /// `_embed` and `_expand` names, resolved against the collections once a connection is at hand.
    private let embeds: [String]
    private let expands: [String]

    /// - Parameter collection: the collection whose records are listed (for a nested route, the children's).
    init(request: Request, collection: String) throws {
        answer = try ListAnswer(request: request, catalog: DocumentCatalog(column: "d.doc", collection: collection))
        self.collection = collection
        (embeds, expands) = (answer.query.embeds, answer.query.expands)
    }

    /// The records of the collection that the query picks.
    func response(on connection: Connection) throws -> Response {
        try response(scope: Self.scope(listing: collection), on: connection)
    }

    /// The records of the collection whose `field` names `parent` (a nested route's children).
    func response(childrenOf parent: DocumentID, field: String, on connection: Connection) throws -> Response {
        let scope: Query = "d.collection = \(collection) AND \(DocumentQueries.references(parent, field: field))"
        return try response(scope: scope, on: connection)
    }

    /// The statement a list runs: the plan's page of the rows in `scope`, each with `relations` appended.
    func statement(scope: Query, relations: [DocumentRelation]) -> Query {
        answer.plan.selectPage(element: DocumentQueries.body(with: relations), from: Self.source, scope: scope, tieBreak: Self.tieBreak)
    }

    /// The rows of a plain (not nested) list of `collection`.
    static func scope(listing collection: String) -> Query {
        "d.collection = \(collection)"
    }

    private func response(scope: Query, on connection: Connection) throws -> Response {
        let relations = try DocumentStore(connection: connection).relations(embeds: embeds, expands: expands, on: collection)
        let element = ListElement.rendered(DocumentQueries.body(with: relations))
        return try answer.response(element: element, from: Self.source, scope: scope, tieBreak: Self.tieBreak, on: connection)
    }
}
