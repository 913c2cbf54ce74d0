import BudgetCore
import HTTPServer
import Postgres

/// `GET|POST /:name/:id/:child`: the records of `child` that name one parent record (docs/json-server.md).
///
/// json-server links a child to its parent by `<singular parent>Id`, e.g. `/posts/1/comments` holds the
/// comments whose `postId` is 1.
struct NestedCollectionRoutes: Sendable {

    func register(in router: inout Router<Database>) {
        router.get("/:name/:id/:child") { request, database in try await list(request, database: database) }
        router.post("/:name/:id/:child") { request, database in try await create(request, database: database) }
    }

    func list(_ request: Request, database: Database) async throws -> Response {
        let path = try NestedPath(request)
        let listing = try CollectionListing(
            request: request, collection: path.child, ledger: database.ledger, maxRows: database.streams.maxRows)
        return try await database.streamedAnswer { connection in
            let parentID = try path.parentID(on: connection, ledger: database.ledger)
            return try listing.start(childrenOf: parentID, field: path.foreignKey, on: connection)
        }
    }

    /// Creates children under the parent; the link member takes the parent id's JSON type, not the URL's text.
    func create(_ request: Request, database: Database) async throws -> Response {
        let path = try NestedPath(request)
        let (records, isArray) = try RequestBody.objects(request)
        return try await database.transaction { connection in
            let parentID = try path.parentID(on: connection, ledger: database.ledger)
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            let created = try records.map { members in
                var linked = members
                linked[path.foreignKey] = parentID.value
                return try store.create(linked, in: path.child)
            }
            guard isArray else {
                return CollectionRoutes.created(created[0].body, at: "/\(path.child)/\(created[0].id.pathSegment)")
            }
            return .json(JSONArray.joining(created.map(\.body)), status: .created)
        }
    }
}

/// The three parts of a nested path and the member that links child to parent.
private struct NestedPath: Sendable {
    let parent: String
    let key: String
    let child: String

    init(_ request: Request) throws {
        parent = try request.parameters.require("name")
        key = try request.parameters.require("id")
        child = try request.parameters.require("child")
    }

    var foreignKey: String { CollectionNames.foreignKey(for: parent) }

    /// The parent's id as stored; both collections must be plural and the parent must exist (else 404).
    ///
    /// json-server answers `[]` under a missing parent; a 404 tells an offline client its parent is gone.
    func parentID(on connection: Connection, ledger: LedgerID) throws -> DocumentID {
        let store = DocumentStore(connection: connection, ledger: ledger)
        try store.requirePlural(parent)
        try store.requirePlural(child)
        guard let stored = try store.find(key, in: parent) else {
            throw CollectionError.recordNotFound(collection: parent, key: key)
        }
        return stored["id"].flatMap(DocumentID.init) ?? DocumentID(pathSegment: key)
    }
}
