import HTTPServer
import Postgres

/// `/health` says the process is up; `/ready` says it can serve: database reachable, migrations applied
/// (docs/operations.md).
struct HealthRoutes: Sendable {
    let pool: ConnectionPool
    let migrator: Migrator

    /// `/health`'s answer, tagged once: the same constant body would otherwise be hashed for its `ETag` on
    /// every request (bench/README.md "bench/health"). The tag is the one `EntityTagMiddleware` computes.
    static let healthAnswer: Response = {
        var answer = Response.json(Array(#"{"status":"ok"}"#.utf8))
        answer.headers.add("ETag", EntityTag.strong(for: answer, including: BudgetApp.representationHeaders).headerValue)
        return answer
    }()

    func register(in router: inout Router<Database>) {
        router.get("/health") { _, _ in Self.healthAnswer }
        router.get("/ready") { _, _ in try await ready() }
    }

    func ready() async throws -> Response {
        let pendingCount: Int
        do {
            pendingCount = try await pool.withConnection { [migrator] connection in
                try migrator.pending(on: connection).count
            }
        } catch let error as PostgresError where error.isConnectionProblem {
            throw APIError.databaseUnavailable
        }
        guard pendingCount == 0 else {
            throw Problem(
                .serviceUnavailable,
                detail: "\(pendingCount) migration(s) not applied yet",
                headers: Headers([("Retry-After", "\(APIError.retryAfterSeconds)")])
            )
        }
        return .json(Array(#"{"status":"ready"}"#.utf8))
    }
}
