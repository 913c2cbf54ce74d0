import BudgetCore
import Postgres

/// Reads and writes generic records on one connection, inside the caller's database transaction.
///
/// Bodies that change are read, changed in Swift and written back whole: jsonb would reorder members and
/// normalize numbers, and records must come back exactly as written (docs/json-server.md).
struct DocumentStore {
    let connection: Connection
    /// The ledger whose collections these are; every statement names it.
    let ledger: LedgerID

    /// Every name that answers as a collection: the typed ones, then the generic ones in definition order.
    func allNames() throws -> [String] {
        TypedResources.names + (try connection.query(DocumentQueries.names(in: ledger)).map { try $0.decode(String.self, at: 0) })
    }

    /// The collection's kind; a name no seed defined is a 404 listing the names that exist.
    func kind(of collection: String) throws -> CollectionKind {
        let result = try connection.query(DocumentQueries.kind(of: collection, in: ledger))
        guard result.count > 0, let kind = CollectionKind(rawValue: try result[0].decode(String.self, at: 0)) else {
            throw CollectionError.unknownCollection(collection, existing: try allNames())
        }
        return kind
    }

    /// Checks that `collection` exists and holds records rather than one singular object.
    func requirePlural(_ collection: String) throws {
        if try kind(of: collection) == .singular { throw CollectionError.singularHasNoRecords(collection) }
    }

    /// The `_embed` and `_expand` relations of `collection`; the collection names are read only when some are asked.
    func relations(embeds: [String], expands: [String], on collection: String) throws -> [DocumentRelation] {
        guard !embeds.isEmpty || !expands.isEmpty else { return [] }
        let plurals = try connection.query(DocumentQueries.pluralNames(in: ledger)).map { try $0.decode(String.self, at: 0) }
        return try DocumentRelation.resolve(embeds: embeds, expands: expands, on: collection, among: plurals)
    }

    /// Creates a record under the client's id, or the next integer id when it gave none (docs/json-server.md).
    func create(_ members: JSONObject, in collection: String) throws -> (id: DocumentID, body: [UInt8]) {
        let id: DocumentID
        if let chosen = try members.documentID() {
            id = chosen
        } else {
            let next = try connection.query(DocumentQueries.takeNextID(in: collection, ledger: ledger))[0].decode(Int64.self, at: 0)
            id = DocumentID(pathSegment: String(next))
        }
        return (id, try insert(members.settingID(id), id: id, into: collection))
    }

    /// Inserts a body that already carries `id`; a taken id fails on `documents_pkey` (409).
    func insert(_ body: JSONObject, id: DocumentID, into collection: String) throws -> [UInt8] {
        if let number = id.positiveInteger {
            try connection.execute(DocumentQueries.reserve(number, in: collection, ledger: ledger))
        }
        return try connection.json(DocumentQueries.insert(body, key: id.key, into: collection, ledger: ledger)) ?? []
    }

    /// The stored record, parsed; nil when there is none.
    func find(_ key: String, in collection: String, lockingIt: Bool = false) throws -> JSONObject? {
        guard let bytes = try connection.json(DocumentQueries.find(key, in: collection, ledger: ledger, lockingIt: lockingIt)) else {
            return nil
        }
        guard case .object(let members) = try JSONParser.parse(bytes) else {
            preconditionFailure("documents_body_is_object lets only objects in")
        }
        return members
    }

    /// PUT: replaces the record, or creates it under the path's id; `isCreated` says which.
    func replace(_ pathKey: String, in collection: String, with members: JSONObject) throws -> (isCreated: Bool, body: [UInt8]) {
        let given = try members.documentID()
        if let given, given.key != pathKey { throw CollectionError.idMismatch(pathKey: pathKey) }
        guard let stored = try find(pathKey, in: collection, lockingIt: true) else {
            let id = given ?? DocumentID(pathSegment: pathKey)
            return (true, try insert(members.settingID(id), id: id, into: collection))
        }
        // The id keeps the JSON type it was stored with unless the body states it.
        let id = given ?? stored["id"].flatMap(DocumentID.init) ?? DocumentID(pathSegment: pathKey)
        return (false, try update(pathKey, in: collection, to: members.settingID(id)))
    }

    /// PATCH: merges `patch` into the stored record by `rule`; nil when the record is missing.
    ///
    /// The row is read `FOR UPDATE` and merged here, inside the caller's transaction, so PostgreSQL only reads
    /// and writes one row, and a concurrent PATCH waits for this one instead of losing its members.
    /// A singular resource has the empty key, and its `id`, if any, is an ordinary member; a record's `id`
    /// never changes.
    func merge(_ pathKey: String, in collection: String, patch: JSONObject, rule: PatchRule) throws -> [UInt8]? {
        var changes = patch
        if !pathKey.isEmpty {
            if let given = try patch.documentID(), given.key != pathKey { throw CollectionError.idMismatch(pathKey: pathKey) }
            changes["id"] = nil
        }
        guard let stored = try find(pathKey, in: collection, lockingIt: true) else { return nil }
        return try update(pathKey, in: collection, to: rule.apply(changes, to: stored))
    }

    func update(_ key: String, in collection: String, to body: JSONObject) throws -> [UInt8] {
        try connection.json(DocumentQueries.update(key, in: collection, ledger: ledger, to: body)) ?? []
    }

    /// DELETE: removes the record and, in every collection of the ledger, the records that name it by `<singular>Id`.
    func delete(_ key: String, in collection: String) throws -> [UInt8]? {
        guard let body = try connection.json(DocumentQueries.delete(key, in: collection, ledger: ledger)) else { return nil }
        let field = CollectionNames.foreignKey(for: collection)
        try connection.execute(DocumentQueries.deleteReferencing(DocumentID(pathSegment: key), field: field, in: ledger))
        return body
    }

    /// A singular resource's object (`{}` if it was never written), with the feed position it reflects.
    func singular(_ collection: String) throws -> SnapshotJSON {
        try connection.snapshotJSON("SELECT coalesce((\(DocumentQueries.find("", in: collection, ledger: ledger))), '{}')", ledger: ledger)!
    }

    /// Replaces a singular resource's object, creating its row if a seed left none.
    func replaceSingular(_ collection: String, with members: JSONObject) throws -> [UInt8] {
        guard try find("", in: collection, lockingIt: true) != nil else {
            return try connection.json(DocumentQueries.insert(members, key: "", into: collection, ledger: ledger)) ?? []
        }
        return try update("", in: collection, to: members)
    }
}
