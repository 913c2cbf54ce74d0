import HTTPServer
import Postgres

/// `GET /db` (the whole database as db.json) and `PUT /db` (replace everything, with `--allow-reset`).
struct WholeDatabaseRoutes: Sendable {
    let allowReset: Bool
    /// What today is, for a transaction the body gives no `date`.
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        router.get(Self.path) { request, database in try await read(request, database: database) }
        router.put(Self.path) { request, database in try await replace(request, database: database) }
    }

    /// One snapshot of every table, in the shape `budget-server export` prints, streamed when it is large.
    func read(_ request: Request, database: Database) async throws -> Response {
        let condition = try request.entityTagCondition("If-None-Match")
        // One snapshot (Database.streamedAnswer's REPEATABLE READ): the export takes many statements, and all
        // of them, X-Sync-Seq and the data version too, must see the same data.
        let ledger = database.ledger
        return try await database.streamedAnswer { connection in
            let row = try connection.query("SELECT \(ChangeFeedQueries.position(ledger)), \(ChangeFeedQueries.dataVersion(ledger))")[0]
            var head = Response.json([])
            head.syncSeq = try row.decode(Int64.self, at: 0)
            let tag = ListValidator.tag(identity: [Self.path], version: try row.decode(String.self, at: 1))
            if ListValidator.isNotModified(condition, tag: tag) { return .answer(ListValidator.notModified(head, tag: tag)) }
            return .body(head, weakTag: tag, source: try Exporter(on: connection, ledger: ledger))
        }
    }

    static let path = "/db"

    /// Replaces everything with the body, all or nothing; client test suites reset their remote this way.
    func replace(_ request: Request, database: Database) async throws -> Response {
        // Refused before the body is read: without --allow-reset no body can matter.
        guard allowReset else { throw CollectionError.resetNotAllowed }
        let document = try RequestBody.parse(request)
        guard case .object = document else {
            throw APIError.malformedBody("the body must be a JSON object of collections, not \(document.typeName)")
        }
        let ledger = database.ledger
        let exported = try await database.transaction { [clock] connection in
            try Seeder.load(document, into: connection, ledger: ledger, replacing: true, clock: clock)
            return try Exporter.export(connection, ledger: ledger)
        }
        return .json(exported)
    }
}
