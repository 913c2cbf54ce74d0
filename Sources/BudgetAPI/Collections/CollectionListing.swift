import HTTPServer
import Postgres

/// How a list request on a generic collection is answered: the query language of docs/json-server.md over `documents.doc`.
///
/// Filters, sorting and pages come from `Listing/` (every generic field is a bound jsonb path); without them
/// the records come in creation order, as json-server keeps its arrays. The records are read through a cursor
/// and streamed when the list is large (`ListAnswer.start`).
struct CollectionListing: Sendable {
    /// Lists select documents as `d`; creation order breaks ties of `_sort`.
    private static let source: Query = "documents d"
    private static let tieBreak: Query = "d.position"

    private let answer: ListAnswer
    /// The collection whose records are listed.
    private let collection: String
    /// The ledger whose collection it is.
    private let ledger: LedgerID
    /// `_embed` and `_expand` names, resolved against the collections once a connection is at hand.
    private let embeds: [String]
    private let expands: [String]

    /// - Parameter collection: the collection whose records are listed (for a nested route, the children's).
    init(request: Request, collection: String, ledger: LedgerID, maxRows: Int?) throws {
        answer = try ListAnswer(
            request: request, catalog: DocumentCatalog(column: "d.doc", collection: collection, ledger: ledger), maxRows: maxRows)
        self.collection = collection
        self.ledger = ledger
        (embeds, expands) = (answer.query.embeds, answer.query.expands)
    }

    /// Begins the answer with the records of the collection that the query picks.
    func start(on connection: Connection) throws -> StreamedStart {
        try start(scope: Self.scope(listing: collection, in: ledger), on: connection)
    }

    /// Begins the answer with the records of the collection whose `field` names `parent` (a nested route's children).
    func start(childrenOf parent: DocumentID, field: String, on connection: Connection) throws -> StreamedStart {
        let scope: Query = "\(Self.scope(listing: collection, in: ledger)) AND \(DocumentQueries.references(parent, field: field))"
        return try start(scope: scope, on: connection)
    }

    /// The two statements a list of the rows in `scope` runs, each record with `relations` appended: its
    /// header and its cursor's rows (for a `total` of 0; only the envelope's offset depends on it).
    func statements(scope: Query, relations: [DocumentRelation]) -> (header: Query, rows: Query) {
        let target = target(scope: scope, relations: relations)
        return (answer.headerStatement(target), answer.rowsStatement(target, total: 0))
    }

    /// What a list of the rows in `scope` selects, each with `relations` appended.
    private func target(scope: Query, relations: [DocumentRelation]) -> ListTarget {
        ListTarget(
            element: .rendered(DocumentQueries.body(with: relations)), source: Self.source, scope: scope, ledger: ledger, tieBreak: Self.tieBreak)
    }

    /// The rows of a plain (not nested) list of the ledger's `collection`.
    static func scope(listing collection: String, in ledger: LedgerID) -> Query {
        "d.ledger_id = \(ledger) AND d.collection = \(collection)"
    }

    private func start(scope: Query, on connection: Connection) throws -> StreamedStart {
        let relations = try DocumentStore(connection: connection, ledger: ledger).relations(embeds: embeds, expands: expands, on: collection)
        return try answer.start(target(scope: scope, relations: relations), on: connection)
    }
}
