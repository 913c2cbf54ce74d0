import Synchronization

/// Purges tombstones older than the retention window, at most once per `interval`, driven by feed reads.
///
/// Why no timer: tombstones matter only to readers of `/changes`, so the first feed read after start-up
/// and then at most one per `interval` runs `purge_change_tombstones` before reading. That needs no
/// background task to start and stop with the server, costs an idle server nothing, and is idempotent
/// across server processes (each purges at most hourly; a purge that finds nothing is one index probe).
/// Tombstones may outlive the window by up to `interval`, which only keeps clients from a 410 longer.
final class TombstonePurger: Sendable {
    let retention: Duration
    let interval: Duration
    /// When the last purge started; nil before the first.
    private let lastStarted = Mutex<ContinuousClock.Instant?>(nil)

    init(retention: Duration, interval: Duration = .seconds(3600)) {
        self.retention = retention
        self.interval = interval
    }

    /// Runs the purge when it is due; concurrent callers do not purge twice.
    func purgeIfDue(in database: Database) async throws {
        let now = ContinuousClock.now
        let isDue = lastStarted.withLock { last in
            // A window shorter than the interval (tests, a tiny --tombstone-retention) purges on every read.
            if let previous = last, now - previous < min(interval, retention) { return false }
            last = now
            return true
        }
        guard isDue else { return }
        do {
            _ = try await database.json(ChangeFeedQueries.purge(retention: retention))
        } catch {
            // Let the next read try again instead of waiting out the interval.
            lastStarted.withLock { $0 = nil }
            throw error
        }
    }
}
