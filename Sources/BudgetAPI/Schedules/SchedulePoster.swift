import Logging
import Postgres
import Synchronization

/// Posts the due occurrences of every ledger's schedules (`post_due_schedules`, migrations/0019): once when
/// the server starts, then every `interval`, on a pool connection, in every server process but a
/// `--read-only` one, which writes nothing.
///
/// Why a timer here, where `PeriodicPurge` has none: an occurrence falls due with the calendar, not with a
/// request, and a client reading its account should find the rent posted whether or not anyone asked
/// before. Running in every process is safe: the statement locks the schedules it posts with `SKIP LOCKED`
/// and every transaction it writes carries the import id `schedule:<id>:<date>`, which the ledger holds once
/// (`transactions_import_id_unique`), so two processes at once, or a process that was down for months,
/// post each occurrence exactly once. A failed run is logged and the next one tries again.
public final class SchedulePoster: Sendable {
    /// How often a process posts: what is due today is posted at most this long after midnight (or after
    /// the schedule was written).
    public static let interval = Duration.seconds(60)

    private let pool: ConnectionPool
    private let clock: CivilClock
    private let logger: Logger
    /// Called after a run that wrote transactions, so that the change feed stamps them at once.
    private let onPosted: @Sendable () -> Void
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Runs finished (failed ones included), for tests that wait for the first.
    private let runs = Mutex<UInt64>(0)

    init(pool: ConnectionPool, clock: CivilClock, logger: Logger, onPosted: @escaping @Sendable () -> Void) {
        self.pool = pool
        self.clock = clock
        self.logger = logger
        self.onPosted = onPosted
    }

    /// Starts the runs: the first at once.
    func start() {
        let loop = Task { [self] in
            while !Task.isCancelled {
                // Runs start an interval apart, however long one took.
                let started = ContinuousClock.now
                _ = try? await postDue()
                try? await Task.sleep(until: started + Self.interval, clock: .continuous)
            }
        }
        task.withLock { $0 = loop }
    }

    /// Stops the timer; a run under way finishes.
    func stop() {
        task.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    /// Runs the poster now, as the timer does: answers how many transactions it wrote. A failure is logged
    /// and rethrown.
    @discardableResult
    public func postDue() async throws -> Int {
        defer { runs.withLock { $0 += 1 } }
        do {
            let statement = ScheduleQueries.postDue(today: clock.today)
            let posted = try await pool.withConnection { try Int($0.query(statement)[0].decode(Int32.self, at: 0)) }
            if posted > 0 {
                logger.info("posted \(posted) scheduled transactions")
                onPosted()
            }
            return posted
        } catch {
            logger.error("posting due schedules failed (the next run tries again): \(error)")
            throw error
        }
    }

    /// How many runs have finished since start.
    public var completedRuns: UInt64 { runs.withLock { $0 } }
}
