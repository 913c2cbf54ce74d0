import HTTPServer
import Postgres

/// `GET /db` (the whole database as db.json) and `PUT /db` (replace everything, with `--allow-reset`).
struct WholeDatabaseRoutes: Sendable {
    let allowReset: Bool
    /// What today is, for a transaction the body gives no `date`.
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        router.get("/db") { _, database in try await read(database: database) }
        router.put("/db") { request, database in try await replace(request, database: database) }
    }

    /// One snapshot of every table, in the shape `budget-server export` prints.
    func read(database: Database) async throws -> Response {
        // REPEATABLE READ: the export takes several statements, and all of them (and X-Sync-Seq) must see one snapshot.
        let snapshot = try await database.run { connection in
            try connection.transaction(isolation: .repeatableRead) { connection in
                let exported = try Exporter.export(connection)
                let position = try connection.query("SELECT \(ChangeFeedQueries.position)")[0].decode(Int64.self, at: 0)
                return SnapshotJSON(json: exported, syncSeq: position)
            }
        }
        return .json(snapshot)
    }

    /// Replaces everything with the body, all or nothing; client test suites reset their remote this way.
    func replace(_ request: Request, database: Database) async throws -> Response {
        // Refused before the body is read: without --allow-reset no body can matter.
        guard allowReset else { throw CollectionError.resetNotAllowed }
        let document = try RequestBody.parse(request)
        guard case .object = document else {
            throw APIError.malformedBody("the body must be a JSON object of collections, not \(document.typeName)")
        }
        let exported = try await database.transaction { [clock] connection in
            try Seeder.load(document, into: connection, replacing: true, clock: clock)
            return try Exporter.export(connection)
        }
        return .json(exported)
    }
}
