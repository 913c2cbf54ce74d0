import Foundation
import Logging

// Threading design
//
// Some work must run outside any request, on its own connection, one run at a time per process, yet be
// prompt: the change feed's sequencer stamps what writers committed. A `BackgroundDrain` owns one
// connection and one thread for that:
//
// - A drain calls the statement, which answers how many items it processed, again as long as it
//   answers a full batch (more may be waiting). A partial batch ends the drain without one more call
//   that would find nothing: whatever commits after that run asks for a drain of its own.
// - Drains are paced: one starts no sooner than `minimumInterval` after the previous one started, so a
//   stream of kicks makes a drain every interval, each carrying what arrived meanwhile, rather than one
//   per kick. After a quiet spell a kick is served at once.
// - After a drain that processed something, a maintenance script (e.g. a VACUUM of what the statement
//   consumes) runs at most once per `maintenanceInterval`, outside any transaction.
// - `kick()` asks for a drain and returns at once; kicks while a drain is running fold into one more
//   drain after it. A timer asks for one every `sweepInterval` too, for work nobody kicked for.
// - `catchUp(timeout:)` waits for a drain that *started after the call* to finish, so whatever committed
//   before the call has been processed when it returns; concurrent callers share that drain. It returns
//   false when the deadline passes first (the database is down, or a drain is stuck behind a lock).
// - Requests are counted: `requested` grows with every kick and catch-up, and a drain that started when
//   `requested` was R completes every request up to R. All of it is guarded by `condition`'s lock.
// - A failed drain drops the connection; the next attempt reconnects after a backoff (50 ms doubling to
//   2 s) while requests wait or time out.

/// Runs one statement on a dedicated connection and thread until it processes less than a full batch,
/// whenever kicked, when a caller wants to catch up, and on a timer.
public final class BackgroundDrain: Sendable {
    private let core: DrainCore

    /// - Parameters:
    ///   - statement: answers one row whose first column is how many items it processed, at most `batchSize`.
    ///   - minimumInterval: the least time from one drain's start to the next one's.
    ///   - maintenance: a script run on the same connection, outside a transaction, after a drain that
    ///     processed something, at most once per `maintenanceInterval`; nil for none.
    ///   - onProgress: called on the drain's thread after a drain that processed something, with the text of
    ///     the second column of each statement run that did (when the statement answers one), in run order.
    public init(
        url: String, statement: Query, batchSize: Int, name: String, minimumInterval: Duration = .zero,
        maintenance: String? = nil, maintenanceInterval: Duration = .seconds(1),
        sweepInterval: Duration = .seconds(1), statementTimeout: Duration = .seconds(10), logger: Logger,
        onProgress: @escaping @Sendable ([String]) -> Void = { _ in }
    ) {
        core = DrainCore(
            url: url, statement: statement, batchSize: batchSize, minimumInterval: minimumInterval,
            maintenance: maintenance, maintenanceInterval: maintenanceInterval, sweepInterval: sweepInterval,
            statementTimeout: statementTimeout, logger: logger, onProgress: onProgress)
        let thread = Thread { [core] in core.run() }
        thread.name = name
        thread.start()
    }

    deinit {
        core.stop()
    }

    /// Asks for a drain soon; never blocks.
    public func kick() {
        core.request()
    }

    /// Waits until a drain that started after this call has finished; false when `timeout` passed first.
    @discardableResult
    public func catchUp(timeout: Duration) async -> Bool {
        let ticket = core.request()
        if core.hasCompleted(ticket) { return true }
        return await withCheckedContinuation { continuation in
            core.wait(for: ticket, deadline: .now + timeout, continuation: continuation)
        }
    }

    /// Finishes a drain that was asked for, then closes the connection and ends the thread; catch-ups
    /// still waiting return false.
    public func stop() {
        core.stop()
    }

    /// Drains that have finished since start, for tests and metrics.
    public var completedDrains: UInt64 {
        core.completedDrains
    }
}
