import Foundation
import Synchronization

/// Lets only a few `CREATE DATABASE`s run on the test cluster at a time; the rest wait their turn, in order
/// of asking.
///
/// Why: Swift Testing starts every test at once, and each asks `TestDatabase` for a fresh database first, so
/// about 400 `CREATE DATABASE … TEMPLATE` arrived together. PostgreSQL 15 copies a template by writing
/// every page through shared buffers into the WAL: 300 backends then queued on the WAL insertion locks for
/// 20-30 s (pg_stat_activity: `LWLock WALInsert`), and the tests already running, whose statements need
/// the same locks and buffers, got no answer within their client's 30 s or a pool checkout timeout (503)
/// under `scripts/test-under-load`. A few at a time create the databases about as fast and leave the
/// cluster to the tests.
///
/// The wait is bounded by progress, not by its length: a waiter fails only when no creation finished for
/// `stallLimit`, since on a slow machine the queue is long but keeps moving.
final class DatabaseCreationGate: Sendable {
    /// How long the queue may go without one creation finishing before a waiter gives up.
    static let stallLimit: Duration = .seconds(120)

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var finished: UInt64 = 0
        var nextID: UInt64 = 0
        var waiting: [Waiter] = []
    }

    let limit: Int
    private let state = Mutex(State())

    /// Twice the cores: enough to keep them busy creating, far below the hundreds that contended.
    static let shared = DatabaseCreationGate(limit: max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))

    init(limit: Int) {
        self.limit = limit
    }

    /// Runs `body` once fewer than `limit` others run; throws `WaitTimedOut` if the queue stalls.
    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let watchdog = Task { [self] in
            var seen = state.withLock { $0.finished }
            while true {
                try await Task.sleep(for: Self.stallLimit)
                let finished = state.withLock { $0.finished }
                if finished == seen { return expire(id) }
                seen = finished
            }
        }
        defer { watchdog.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let isAdmitted = state.withLock { state in
                if state.waiting.isEmpty && state.running < limit {
                    state.running += 1
                    return true
                }
                state.waiting.append(Waiter(id: id, continuation: continuation))
                return false
            }
            if isAdmitted { continuation.resume() }
        }
    }

    private func leave() {
        let next = state.withLock { state -> Waiter? in
            state.running -= 1
            state.finished += 1
            guard !state.waiting.isEmpty else { return nil }
            state.running += 1
            return state.waiting.removeFirst()
        }
        next?.continuation.resume()
    }

    private func expire(_ id: UInt64) {
        let expired = state.withLock { state -> (Waiter, Int, Int)? in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return (state.waiting.remove(at: index), index, state.running)
        }
        guard let (waiter, ahead, running) = expired else { return }
        waiter.continuation.resume(
            throwing: WaitTimedOut(
                description: "no CREATE DATABASE on the test cluster finished for \(Self.stallLimit) "
                    + "(\(running) running, \(ahead) waiting ahead of this one)"))
    }
}
