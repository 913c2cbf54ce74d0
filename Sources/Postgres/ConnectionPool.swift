import Foundation
import Logging

// Threading design
//
// libpq calls block (network round trips, up to `statement_timeout`). Run on Swift's cooperative
// thread pool (one thread per core, two here) or on an HTTP event loop, two slow queries would stall
// every task or connection in the process. So blocking work lives on threads of its own:
//
// - Each pooled connection is owned by one dedicated worker thread for its whole life; a `Connection`
//   never crosses threads, which is why it need not be `Sendable`.
// - `withConnection` wraps the caller's body and its `CheckedContinuation` into a job and appends it to
//   one FIFO queue under a lock; a free worker takes it, runs the body synchronously, and resumes the
//   continuation. The awaiting task is suspended meanwhile, holding no thread.
// - Checkout timeouts use one sweeper thread that wakes periodically and fails jobs that waited longer
//   than `checkoutTimeout` with `.poolTimeout`; there is no timer or Task per request. A job is removed
//   from the queue under the lock by exactly one party (worker, sweeper or shutdown), so its
//   continuation is resumed exactly once.
// - Before each job a worker checks its connection cheaply (`Connection.isHealthy`: a zero-timeout poll
//   and `PQconsumeInput`), and after each job it reconnects at once if the connection broke. While the
//   server is down, reconnects back off exponentially and jobs fail fast with `.connectionFailed`, so an
//   API can answer 503 instead of hanging.

/// A bounded pool of PostgreSQL connections, each owned by its own worker thread.
public final class ConnectionPool: Sendable {
    private let core: PoolCore

    /// Starts `configuration.size` worker threads, which connect in the background.
    public init(configuration: PoolConfiguration, logger: Logger) {
        core = PoolCore(configuration: configuration, logger: logger)
        core.start()
    }

    deinit {
        // Not waiting: the last reference may be dropped by a job on a worker thread, which would then wait for itself.
        core.shutdown(waitForWorkers: false)
    }

    /// Runs `body` on a pooled connection, on the pool's own worker thread (never on the cooperative pool).
    ///
    /// Throws `.poolTimeout` when no connection is free within the checkout timeout, `.poolClosed` after
    /// `shutdown()`, `.connectionFailed` while the server cannot be reached, or whatever `body` throws.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(
                PoolJob(
                    enqueuedAt: .now,
                    run: { connection in continuation.resume(with: Result { try body(connection) }) },
                    fail: { error in continuation.resume(throwing: error) }))
        }
    }

    /// Lets running jobs finish, fails waiting ones with `.poolClosed`, and closes every connection.
    ///
    /// Returns once the workers have exited. The wait happens on a thread of its own, since a running job
    /// may take up to the statement timeout; never call it from inside a job.
    public func shutdown() async {
        await withCheckedContinuation { continuation in
            Thread { [core] in
                core.shutdown()
                continuation.resume()
            }.start()
        }
    }

    func enqueue(_ job: PoolJob) {
        core.enqueue(job)
    }

    /// How the pool connects, e.g. for a `Notifications` listener on the same database.
    public var configuration: PoolConfiguration {
        core.configuration
    }

    /// Connections in total, connections running a job, and jobs waiting for one.
    public var statistics: (size: Int, inUse: Int, waiting: Int) {
        core.statistics
    }
}

/// A queued request for a connection; `run` and `fail` resume the caller's continuation.
struct PoolJob: Sendable {
    let enqueuedAt: ContinuousClock.Instant
    let run: @Sendable (Connection) -> Void
    let fail: @Sendable (PostgresError) -> Void
}
