import BudgetCore
import HTTPServer
import Postgres

/// The json-server routes of the generic collections (docs/json-server.md): plural and singular resources, nested
/// children, and the whole database at `/db`.
///
/// Registered after the typed routes: the router prefers literal segments, so `/categories…` stays typed
/// and only names without routes of their own reach these patterns.
struct CollectionRoutes: Sendable {
    /// Whether `PUT /db` may replace everything (`--allow-reset`, for client test suites).
    let allowReset: Bool
    /// What today is, for `PUT /db`'s transactions without a `date`.
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        WholeDatabaseRoutes(allowReset: allowReset, clock: clock).register(in: &router)
        router.get("/:name") { request, database in try await readCollection(request, database: database) }
        router.post("/:name") { request, database in try await create(request, database: database) }
        router.put("/:name") { request, database in try await writeSingular(request, database: database, isMerge: false) }
        router.patch("/:name") { request, database in try await writeSingular(request, database: database, isMerge: true) }
        router.get("/:name/:id") { request, database in try await find(request, database: database) }
        router.put("/:name/:id") { request, database in try await replace(request, database: database) }
        router.patch("/:name/:id") { request, database in try await merge(request, database: database) }
        router.delete("/:name/:id") { request, database in try await delete(request, database: database) }
        NestedCollectionRoutes().register(in: &router)
    }

    /// A plural collection's records in creation order, or a singular resource's object.
    func readCollection(_ request: Request, database: Database) async throws -> Response {
        let name = try request.parameters.require("name")
        let maxRows = database.streams.maxRows
        return try await database.streamedAnswer { connection in
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            switch try store.kind(of: name) {
            // A singular resource has no list to query, so list parameters cannot be wrong for it.
            case .plural:
                return try CollectionListing(request: request, collection: name, ledger: database.ledger, maxRows: maxRows).start(on: connection)
            case .singular: return .answer(.json(try store.singular(name)))
            }
        }
    }

    /// POST: creates one record or, from an array, all of them or none; on a singular resource, replaces it.
    func create(_ request: Request, database: Database) async throws -> Response {
        let name = try request.parameters.require("name")
        let (records, isArray) = try RequestBody.objects(request)
        return try await database.transaction { connection in
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            if try store.kind(of: name) == .singular {
                guard !isArray else { throw APIError.malformedBody("\(name) is a singular resource; send one JSON object") }
                // json-server 0.17 answers a POST on a singular resource with 201.
                var response = Response.json(try store.replaceSingular(name, with: records[0]), status: .created)
                response.headers.replaceOrAdd("Location", "/\(name)")
                return response
            }
            let created = try records.map { try store.create($0, in: name) }
            guard isArray else { return Self.created(created[0].body, at: "/\(name)/\(created[0].id.pathSegment)") }
            return .json(JSONArray.joining(created.map(\.body)), status: .created)
        }
    }

    /// One record, with the members `_embed` and `_expand` ask for; other list parameters are ignored here.
    func find(_ request: Request, database: Database) async throws -> Response {
        let (name, key) = try Self.recordPath(request)
        let asked = try ListQuery.parse(request.query.filter { $0.name == "_embed" || $0.name == "_expand" })
        return try await database.transaction { connection in
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            try store.requirePlural(name)
            let relations = try store.relations(embeds: asked.embeds, expands: asked.expands, on: name)
            guard
                let record = try connection.snapshotJSON(
                    DocumentQueries.find(key, in: name, ledger: database.ledger, with: relations), ledger: database.ledger)
            else {
                throw CollectionError.recordNotFound(collection: name, key: key)
            }
            return .json(record)
        }
    }

    /// PUT: replaces the record, or creates it under the path's id (201) so offline clients can push theirs.
    func replace(_ request: Request, database: Database) async throws -> Response {
        let (name, key) = try Self.recordPath(request)
        let members = try RequestBody.object(request)
        return try await database.transaction { connection in
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            try store.requirePlural(name)
            let (isCreated, body) = try store.replace(key, in: name, with: members)
            return isCreated ? Self.created(body, at: "/\(name)/\(DocumentID(pathSegment: key).pathSegment)") : .json(body)
        }
    }

    /// PATCH: json-server's shallow merge for application/json, RFC 7396's recursive one for merge-patch+json.
    func merge(_ request: Request, database: Database) async throws -> Response {
        let (name, key) = try Self.recordPath(request)
        let patch = try RequestBody.object(request, accepting: [RequestBody.json, RequestBody.mergePatch])
        let rule = PatchRule(contentType: request.contentType)
        return try await database.transaction { connection in
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            try store.requirePlural(name)
            guard let body = try store.merge(key, in: name, patch: patch, rule: rule) else {
                throw CollectionError.recordNotFound(collection: name, key: key)
            }
            return .json(body)
        }
    }

    /// DELETE: answers the record as it was, and deletes the records that name it (json-server 0.17).
    func delete(_ request: Request, database: Database) async throws -> Response {
        let (name, key) = try Self.recordPath(request)
        return try await database.transaction { connection in
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            try store.requirePlural(name)
            guard let body = try store.delete(key, in: name) else {
                throw CollectionError.recordNotFound(collection: name, key: key)
            }
            return .json(body)
        }
    }

    /// PUT or PATCH on `/:name`: only a singular resource is written whole; a plural one needs a record id.
    func writeSingular(_ request: Request, database: Database, isMerge: Bool) async throws -> Response {
        let name = try request.parameters.require("name")
        let accepted = isMerge ? [RequestBody.json, RequestBody.mergePatch] : [RequestBody.json]
        let members = try RequestBody.object(request, accepting: accepted)
        let rule = PatchRule(contentType: request.contentType)
        return try await database.transaction { connection in
            let store = DocumentStore(connection: connection, ledger: database.ledger)
            guard try store.kind(of: name) == .singular else { throw CollectionError.pluralNeedsRecordID(name) }
            if isMerge, let body = try store.merge("", in: name, patch: members, rule: rule) {
                return .json(body)
            }
            // A singular resource a seed left without a row merges into `{}`, so merge-patch's nulls still remove.
            return .json(try store.replaceSingular(name, with: isMerge ? rule.apply(members, to: JSONObject()) : members))
        }
    }

    static func created(_ body: [UInt8], at location: String) -> Response {
        var response = Response.json(body, status: .created)
        response.headers.replaceOrAdd("Location", location)
        return response
    }

    /// The collection name and record key of `/:name/:id`.
    private static func recordPath(_ request: Request) throws -> (name: String, key: String) {
        (try request.parameters.require("name"), try request.parameters.require("id"))
    }
}
