import BudgetCore
import HTTPServer
import Postgres

/// The record that owns others through one of their columns, as a category owns its transactions and an
/// account its own: the path `/<collection>/:id/<children>` lists and creates the children of one owner.
struct RecordOwner: Sendable {
    /// The owner's collection, e.g. `categories`.
    let collection: String
    /// Its record's name in messages, e.g. `category`.
    let recordName: String
    /// The children's column naming the owner, e.g. `category_id`: the nested list's scope.
    let column: SQLIdentifier
    /// The children's foreign key to the owner (`TypedResource.foreignKey(to:)`), which a create under a
    /// missing owner fails.
    let foreignKey: String
    /// Whether the ledger has the owner with this id, as a boolean expression.
    let exists: @Sendable (_ id: Int64, _ ledger: LedgerID) -> Query
    /// Members that are null in every child that has an owner, as a rule of the schema makes them, e.g. a
    /// transaction's `splits` (a split has no category): the nested list selects NULL for them.
    let nullMembers: Set<String>

    /// `owner`'s records as `child`'s declared foreign key to it names them.
    init(
        _ owner: any TypedResource.Type, of child: any TypedResource.Type, nullMembers: Set<String> = [],
        exists: @escaping @Sendable (_ id: Int64, _ ledger: LedgerID) -> Query
    ) {
        let key = child.foreignKey(to: owner)
        guard let column = child.column(of: key.field) else { preconditionFailure("\(child.collection) has no column for \(key.field)") }
        (collection, recordName, self.column, foreignKey, self.exists) = (owner.collection, owner.recordName, column, key.name, exists)
        self.nullMembers = nullMembers
    }
}

/// `/<owner>/:id/<children>`: one owner's records, through the query language, and creating them under it
/// (docs/api.md); an owner that does not exist is a 404 of the path.
struct OwnedRecordRoutes<Child: TypedResource>: Sendable {
    let owner: RecordOwner
    let clock: CivilClock
    /// Validates a body posted under the path, whose owner the path names (so the body need not).
    let fields: @Sendable (_ members: JSONObject, _ ownerID: Int64, _ fieldPrefix: String) throws -> Child.Fields

    /// `/<owner>/:id/<children>`.
    var path: String { "/\(owner.collection)/:id/\(Child.collection)" }

    func register(in router: inout Router<Database>) {
        router.get(path) { request, database in try await list(request, database: database) }
        router.post(path) { request, database in try await create(request, database: database) }
    }

    func list(_ request: Request, database: Database) async throws -> Response {
        let ownerID = try recordID(request)
        let list = try Child.listAnswer(
            for: request, context: RecordContext(clock: clock, ledger: database.ledger), maxRows: database.streams.maxRows)
        var source = list.source
        if !owner.nullMembers.isEmpty, case .plain(let record) = source.element {
            source.element = .plain(record.selectingNull(owner.nullMembers))
        }
        return try await database.list(
            list.answer, from: source,
            scope: "\(Child.alias).\(owner.column) = \(ownerID)",
            // The children's foreign key to the owner (`foreignKey`) makes any child row proof that the owner exists.
            owner: ListOwner(
                exists: owner.exists(ownerID, database.ledger), missing: APIError.notFound(resource: owner.recordName, id: ownerID),
                isImpliedByRows: true))
    }

    func create(_ request: Request, database: Database) async throws -> Response {
        let ownerID = try recordID(request)
        return try await Self.missingOwnerIsNotFound(owner, ownerID) {
            try await RecordRoutes<Child>(clock: clock).create(request, database: database) { members, prefix in
                try fields(members, ownerID, prefix)
            }
        }
    }

    /// Runs a write that names the path's owner; its foreign key failing means the path's owner does not exist.
    static func missingOwnerIsNotFound(_ owner: RecordOwner, _ ownerID: Int64, _ write: () async throws -> Response) async throws -> Response {
        do {
            return try await write()
        } catch let error as PostgresError where error.constraint == owner.foreignKey {
            throw APIError.notFound(resource: owner.recordName, id: ownerID)
        }
    }
}

extension OwnedRecordRoutes where Child: CombinableInserts {
    /// `POST /<owner>/:id/<children>`, as an atomic batch writes a run of its creates together (a missing
    /// owner fails the run's INSERT, and the batch then runs each create through this route: `BatchRoute`).
    func combinableCreates() -> [RouteSignature: CombinableCreate] {
        [
            RouteSignature(.post, path): RecordRoutes<Child>(clock: clock).combinableCreate { members, request in
                try fields(members, try recordID(request), "")
            }
        ]
    }
}
