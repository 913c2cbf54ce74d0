import Postgres
import Synchronization

/// Runs a purge statement at most once per `interval`, driven by the requests that care about it.
///
/// Why no timer: the rows a purge removes (old tombstones, expired idempotency keys) matter only to the
/// requests that read them, so the first such request after start-up and then at most one per `interval`
/// runs the purge first. That needs no background task to start and stop with the server, costs an idle
/// server nothing, and is harmless across server processes (each purges at most once per interval; a
/// purge that finds nothing is one index probe). Rows may outlive their window by up to `interval`.
final class PeriodicPurge: Sendable {
    let statement: Query
    let interval: Duration
    /// When the last purge started; nil before the first.
    private let lastStarted = Mutex<ContinuousClock.Instant?>(nil)

    init(statement: Query, interval: Duration = .seconds(3600)) {
        self.statement = statement
        self.interval = interval
    }

    /// Runs the purge when it is due; concurrent callers do not purge twice.
    func purgeIfDue(in database: Database) async throws {
        let now = ContinuousClock.now
        let isDue = lastStarted.withLock { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
        guard isDue else { return }
        do {
            // Outside any request transaction: a purge is not part of what the request writes.
            try await database.pool.withConnection { [statement] in try $0.execute(statement) }
        } catch {
            // Let the next request try again instead of waiting out the interval.
            lastStarted.withLock { $0 = nil }
            throw error
        }
    }
}
