import Foundation
import Logging

// Threading design
//
// LISTEN needs a connection that stays open and is read whenever the server pushes something, which a
// pooled connection (checked out per job, drained by `isHealthy`) cannot be. So one dedicated connection
// is owned by one dedicated thread for the life of a `Notifications`:
//
// - The thread blocks in poll() on the connection's socket, at most `NotificationCore.tick` at a time.
//   When the socket is readable it reads every pending notification with `PQconsumeInput`/`PQnotifies`.
// - Waiters are not threads and not tasks: each is a `CheckedContinuation` with a deadline, kept in a
//   dictionary under a `Mutex`. A notification on the channel bumps a `generation` counter and resumes
//   every waiter at once; each tick the thread also resumes the waiters whose deadline passed. A
//   waiter is removed from the dictionary under the lock by exactly one party (the thread, its task's
//   cancellation handler, or `stop`), so its continuation is resumed exactly once, and a waiter whose
//   client went away ends with its deadline at the latest. Hundreds of waiters cost one entry each.
// - The counter, not the notification itself, is the contract: a caller reads `generation`, checks the
//   database, and then waits for a generation after the one it read. A notification that arrives
//   between the check and the wait is therefore never lost.
// - When the connection breaks, the thread reconnects by itself with backoff (50 ms doubling to 2 s),
//   LISTENs again and bumps the generation once listening, because notifications sent while it was
//   away are gone: every waiter wakes and looks at the database again. The first LISTEN counts the
//   same way, so a caller never depends on the listener having been ready before its check.
// - The thread starts on first use (so a server that never long-polls opens no extra connection) and
//   exits within one tick of `stop()` or of the last reference going away, closing its connection.

/// Wakes async waiters when PostgreSQL sends a NOTIFY on one channel, from any server process.
///
/// Usage: `let seen = notifications.generation`, look at the database, then
/// `await notifications.wait(after: seen, timeout: …)` if nothing was there yet.
///
/// With `topics`, each payload names the topics it concerns (e.g. the ledgers whose feed moved), and a
/// waiter may wait for one topic: `generation(of:)` and `wait(after:topic:timeout:)` then move only for
/// notifications of that topic, or of every topic (a (re)connect, a payload `topics` cannot read).
public final class Notifications: Sendable {
    private let core: NotificationCore

    /// Prepares a listener on `channel` whose every notification wakes every waiter; it connects to `url`
    /// on first use of `generation` or `wait`.
    public init(url: String, channel: String, logger: Logger) {
        core = NotificationCore(url: url, channel: channel, logger: logger)
    }

    /// Prepares a listener on `channel` whose payloads `topics` reads: the topics a payload names, or nil
    /// to wake every waiter. Called on the listener's thread for each notification.
    public init(url: String, channel: String, logger: Logger, topics: @escaping @Sendable (String) -> [Int64]?) {
        core = NotificationCore(url: url, channel: channel, logger: logger, topics: topics)
    }

    deinit {
        core.stop()
    }

    /// A number that grows with every notification on the channel and every (re)start of listening.
    public var generation: UInt64 {
        core.startIfNeeded()
        return core.currentGeneration()
    }

    /// Whether notifications reach this process now. While the listener is (re)connecting they are lost, so
    /// a cache that a notification would invalidate must not be trusted (the generation moves again once it
    /// listens).
    public var isListening: Bool {
        core.startIfNeeded()
        return core.isListening
    }

    /// A number that grows with every notification naming `topic` (or every topic) and every (re)start of
    /// listening; notifications of other topics leave it alone.
    public func generation(of topic: Int64) -> UInt64 {
        core.startIfNeeded()
        return core.currentGeneration(for: topic)
    }

    /// Suspends until the generation passes `seen`, the timeout ends, the task is cancelled, or the
    /// listener stops; returns the generation then (equal to `seen` when nothing happened).
    public func wait(after seen: UInt64, timeout: Duration) async -> UInt64 {
        await wait(after: seen, topic: nil, timeout: timeout)
    }

    /// As `wait(after:timeout:)`, for the generation of `topic` (`generation(of:)`); nil waits for any.
    public func wait(after seen: UInt64, topic: Int64?, timeout: Duration) async -> UInt64 {
        core.startIfNeeded()
        let id = core.makeWaiterID()
        let deadline = ContinuousClock.now + timeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                core.add(id: id, after: seen, topic: topic, deadline: deadline, continuation: continuation)
            }
        } onCancel: { [core] in
            core.resume(id: id)
        }
    }

    /// Wakes this process's waiters as a notification would, without a round trip through PostgreSQL:
    /// for a change this process already knows about.
    public func signal() {
        core.bumpGeneration()
    }

    /// Wakes this process's waiters of `topics` (and those waiting for any notification), as a
    /// notification naming them would.
    public func signal(topics: [Int64]) {
        core.bump(topics: topics)
    }

    /// Stops the listener thread and resumes every waiter; later waits return at once.
    public func stop() {
        core.stop()
    }

    /// Whether `stop()` was called: waits return at once from now on.
    public var isStopped: Bool {
        core.isStopped
    }

    /// Waiters currently suspended, for tests and metrics.
    public var waiterCount: Int {
        core.waiterCount
    }
}
