import Foundation
import Logging
import Sockets

/// The state and thread loop behind a `BackgroundDrain` (see the design note in BackgroundDrain.swift).
// @unchecked Sendable: every mutable field is guarded by `condition`'s lock; `connection` and the retry
// fields are touched only by the drain's own thread.
final class DrainCore: @unchecked Sendable {
    private let url: String
    private let statement: Query
    private let batchSize: Int
    private let maintenance: String?
    private let maintenanceInterval: Duration
    private let minimumInterval: Duration
    private let sweepInterval: Duration
    private let statementTimeout: Duration
    private let logger: Logger
    private let onProgress: @Sendable ([String]) -> Void

    private let condition = NSCondition()
    /// Grows with every kick and catch-up; guarded by `condition`.
    private var requested: UInt64 = 0
    /// The `requested` value the last finished drain started at; guarded by `condition`.
    private var completed: UInt64 = 0
    /// Drains finished since start; guarded by `condition`.
    private(set) var finishedDrains: UInt64 = 0
    /// Catch-ups waiting for `completed` to reach their ticket; guarded by `condition`.
    private var waiters: [UInt64: Waiter] = [:]
    private var nextWaiterID: UInt64 = 0
    private var isStopped = false

    private struct Waiter {
        let ticket: UInt64
        let continuation: CheckedContinuation<Bool, Never>
        /// Ends the wait at its deadline; cancelled when a drain ends it first, so no timer outlives its wait.
        var timer: Task<Void, Never>?

        func resume(returning value: Bool) {
            timer?.cancel()
            continuation.resume(returning: value)
        }
    }

    // Only the drain's thread touches these.
    private var connection: Connection?
    private var retryAt = ContinuousClock.now
    private var retryDelay = DrainCore.initialRetryDelay
    private var hasReportedFailure = false
    private var lastDrainStart: ContinuousClock.Instant?
    private var lastMaintenance = ContinuousClock.now
    private static let initialRetryDelay = Duration.milliseconds(50)
    private static let maximumRetryDelay = Duration.seconds(2)

    init(
        url: String, statement: Query, batchSize: Int, minimumInterval: Duration, maintenance: String?,
        maintenanceInterval: Duration, sweepInterval: Duration, statementTimeout: Duration, logger: Logger,
        onProgress: @escaping @Sendable ([String]) -> Void
    ) {
        self.url = url
        self.statement = statement
        self.batchSize = batchSize
        self.minimumInterval = minimumInterval
        self.maintenance = maintenance
        self.maintenanceInterval = maintenanceInterval
        self.sweepInterval = sweepInterval
        self.statementTimeout = statementTimeout
        self.logger = logger
        self.onProgress = onProgress
    }

    var completedDrains: UInt64 {
        condition.withLock { finishedDrains }
    }

    /// Counts a request and wakes the thread; answers the ticket a drain must start at or after.
    @discardableResult
    func request() -> UInt64 {
        condition.withLock {
            requested += 1
            condition.signal()
            return requested
        }
    }

    func hasCompleted(_ ticket: UInt64) -> Bool {
        condition.withLock { completed >= ticket }
    }

    /// Resumes `continuation` with true once a drain covering `ticket` finished, or with false at `deadline`.
    func wait(for ticket: UInt64, deadline: ContinuousClock.Instant, continuation: CheckedContinuation<Bool, Never>) {
        let id: UInt64? = condition.withLock {
            guard completed < ticket, !isStopped else { return nil }
            nextWaiterID += 1
            waiters[nextWaiterID] = Waiter(ticket: ticket, continuation: continuation)
            return nextWaiterID
        }
        guard let id else {
            continuation.resume(returning: hasCompleted(ticket))
            return
        }
        // The thread may be stuck in a statement, so the deadline is kept by a task of its own. Whoever
        // removes the waiter under the lock resumes it, so it is resumed exactly once.
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(until: deadline)) != nil, let self else { return }
            let expired = self.condition.withLock { self.waiters.removeValue(forKey: id) }
            expired?.resume(returning: false)
        }
        let isWaiting = condition.withLock {
            waiters[id]?.timer = timer
            return waiters[id] != nil
        }
        if !isWaiting { timer.cancel() }
    }

    func stop() {
        let abandoned: [Waiter] = condition.withLock {
            isStopped = true
            condition.signal()
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in abandoned { waiter.resume(returning: false) }
    }

    /// The thread's loop: sleep until a request, the sweep or a retry is due, then drain.
    ///
    /// The sweep starts with the first request, so a process that never needs the drain never connects.
    func run() {
        var nextSweep: ContinuousClock.Instant?
        while true {
            let shouldExit: Bool = condition.withLock {
                while !isStopped, requested == completed, nextSweep.map({ ContinuousClock.now < $0 }) ?? true {
                    if let nextSweep {
                        _ = condition.wait(until: Date(timeIntervalSinceNow: max(0, (nextSweep - .now).timeInterval)))
                    } else {
                        condition.wait()
                    }
                }
                // A stop drains once more only if someone asked for it.
                return isStopped && requested == completed
            }
            if shouldExit { break }
            // Pacing: requests that arrive meanwhile fold into this drain, so under load each drain carries
            // a batch, while a lone request after a quiet spell is served at once. A stop does not wait.
            let earliest = max(retryAt, lastDrainStart.map { $0 + minimumInterval } ?? retryAt)
            if ContinuousClock.now < earliest, !condition.withLock({ isStopped }) {
                Thread.sleep(forTimeInterval: max(0, (earliest - .now).timeInterval))
            }
            lastDrainStart = .now
            // Taken after the pause: the drain covers every request made before it starts.
            let ticket = condition.withLock { requested }
            if drain() {
                finish(ticket)
            } else if condition.withLock({ isStopped }) {
                break
            }
            nextSweep = ContinuousClock.now + sweepInterval
        }
        connection?.close()
        connection = nil
    }

    /// Calls the statement until it processes less than a full batch; false when the connection or a
    /// statement failed.
    private func drain() -> Bool {
        do {
            let connection = try openConnection()
            var hasProgressed = false
            var details: [String] = []
            var processed = batchSize
            while processed >= batchSize {
                let result = try connection.query(statement)
                processed = try result[0].decode(Int.self, at: 0)
                guard processed > 0 else { continue }
                hasProgressed = true
                if result.columnNames.count > 1, let detail = result[0].column(1) { details.append(detail) }
            }
            if hasProgressed {
                onProgress(details)
                if let maintenance, ContinuousClock.now - lastMaintenance >= maintenanceInterval {
                    lastMaintenance = .now
                    try connection.execute(script: maintenance)
                }
            }
            retryDelay = Self.initialRetryDelay
            if hasReportedFailure { logger.info("background drain restored") }
            hasReportedFailure = false
            return true
        } catch {
            if !hasReportedFailure {
                logger.error("background drain failed; retrying", metadata: ["error": "\(String(reflecting: error))"])
            }
            hasReportedFailure = true
            connection?.close()
            connection = nil
            retryAt = .now + retryDelay
            retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
            return false
        }
    }

    private func openConnection() throws -> Connection {
        if let connection { return connection }
        let fresh = try Connection.connect(to: url, statementTimeout: statementTimeout)
        connection = fresh
        return fresh
    }

    /// Marks every request up to `ticket` done and resumes the catch-ups it covers.
    private func finish(_ ticket: UInt64) {
        let done: [Waiter] = condition.withLock {
            completed = max(completed, ticket)
            finishedDrains += 1
            let ready = waiters.filter { $0.value.ticket <= completed }
            for id in ready.keys { waiters.removeValue(forKey: id) }
            return Array(ready.values)
        }
        for waiter in done { waiter.resume(returning: true) }
    }

}
