import Foundation
import Logging

/// The loop of one pool thread: owns one connection, keeps it healthy, and runs jobs on it.
///
/// Only its own thread touches a worker, so its state needs no lock.
final class PoolWorker: @unchecked Sendable {
    // @unchecked Sendable: created on the starting thread, then used only by its own worker thread.
    private let core: PoolCore
    private var connection: Connection?
    /// The last reason connecting failed, reported to jobs that arrive during the backoff.
    private var lastConnectError: PostgresError?
    private var retryAt: ContinuousClock.Instant = .now
    private var retryDelay: Duration = PoolWorker.initialRetryDelay

    private static let initialRetryDelay = Duration.milliseconds(50)
    private static let maximumRetryDelay = Duration.seconds(2)

    init(core: PoolCore) {
        self.core = core
    }

    func run() {
        if !core.configuration.connectsOnDemand { connectIfAllowed() }
        while let job = core.nextJob() {
            if let current = connection, !current.isHealthy {
                core.logger.warning("pooled database connection was lost; reconnecting")
                discardConnection()
            }
            if connection == nil { connectIfAllowed() }
            if let connection {
                job.run(connection)
                tidyAfterJob(connection)
            } else {
                // Fail fast while the server is unreachable, so callers can answer 503 at once.
                job.fail(lastConnectError ?? PostgresError(kind: .connectionFailed, message: "database unavailable"))
            }
            core.jobFinished()
        }
        connection?.close()
    }

    /// Leaves the connection ready for the next job, or replaces it at once when it broke.
    ///
    /// A connection lost during the job shows in libpq's status; looking at the socket as well would repeat
    /// the `isHealthy` check the next job makes anyway (one poll per job, not two, on the hot path).
    private func tidyAfterJob(_ used: Connection) {
        if !used.isConnected {
            core.logger.warning("database connection broke during a job; reconnecting")
            discardConnection()
            connectIfAllowed()
        } else if used.isInTransaction {
            // A body that began a transaction by hand and threw must not leak it into the next job.
            do { try used.execute(script: "ROLLBACK") } catch { discardConnection() }
        }
    }

    private func discardConnection() {
        connection?.close()
        connection = nil
    }

    /// Connects unless a recent failure's backoff has not yet elapsed.
    private func connectIfAllowed() {
        guard ContinuousClock.now >= retryAt else { return }
        do {
            connection = try Connection.connect(
                to: core.configuration.url,
                statementTimeout: core.configuration.statementTimeout)
            if lastConnectError != nil { core.logger.info("database connection restored") }
            lastConnectError = nil
            retryDelay = Self.initialRetryDelay
        } catch {
            let failure = error as? PostgresError ?? PostgresError(kind: .connectionFailed, message: "\(error)")
            if lastConnectError == nil {
                core.logger.error("cannot connect to the database", metadata: ["error": "\(failure.debugDescription)"])
            }
            lastConnectError = failure
            retryAt = .now + retryDelay
            retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
        }
    }
}
