import Foundation
import Synchronization

/// The test cluster's connections, shared out among the fixtures that hold them, so that the suite never asks
/// PostgreSQL for more than its `max_connections`, however many tests it has.
///
/// Why: Swift Testing starts every test at once, and each app (`TestApp`) or server process (`ServerProcess`)
/// a test starts holds a pool of connections. Their sum grew with the suite until, on a slow run where more
/// tests overlapped, it passed the cluster's limit: PostgreSQL refused connections ("sorry, too many clients
/// already"), the pools failed fast, and servers answered 503 "the database is unreachable" to tests that had
/// done nothing wrong (docs/testing.md). Raising the limit had only postponed it three times. So a fixture
/// takes from this budget the most connections it can open before it opens any, and gives them back when it
/// stops; when the budget is spent, the next fixture waits for one to stop. The wait is bounded: a fixture
/// that waited minutes means a test hangs, and it fails naming who holds the budget.
///
/// What no fixture holds (a test's own short connections, the pools of the Postgres tests, creating
/// databases) comes out of the cluster's remaining connections (`TestDatabase.fixtureConnections`).
public final class ConnectionBudget: Sendable {
    /// How long a fixture waits for connections before its test fails.
    public static let waitLimit: Duration = .seconds(300)

    private struct Waiter {
        let id: UInt64
        let count: Int
        let holder: String
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiting: [Waiter] = []
        /// Who holds what, for the message of a wait that ran out.
        var held: [UInt64: (holder: String, count: Int)] = [:]
    }

    public let capacity: Int
    private let state: Mutex<State>

    public init(capacity: Int) {
        self.capacity = capacity
        state = Mutex(State(available: capacity))
    }

    /// The budget of the test process's cluster, sized once it is set up.
    public static func shared() async throws -> ConnectionBudget {
        try await sharedBudget.value
    }

    private static let sharedBudget = Task<ConnectionBudget, any Error> {
        ConnectionBudget(capacity: try await TestDatabase.fixtureConnections())
    }

    /// Waits until `count` connections are free, in order of asking, and takes them for `holder` (a name in
    /// messages). Throws `ConnectionBudgetExhausted` after `waitLimit`.
    public func lease(_ count: Int, for holder: String) async throws -> ConnectionLease {
        let count = min(count, capacity)
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let timeout = Task { [self] in
            try await Task.sleep(for: Self.waitLimit)
            expire(id)
        }
        defer { timeout.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let isGranted = state.withLock { state in
                if state.waiting.isEmpty && state.available >= count {
                    state.available -= count
                    state.held[id] = (holder, count)
                    return true
                }
                state.waiting.append(Waiter(id: id, count: count, holder: holder, continuation: continuation))
                return false
            }
            if isGranted { continuation.resume() }
        }
        return ConnectionLease(budget: self, id: id)
    }

    fileprivate func release(_ id: UInt64) {
        let granted = state.withLock { state -> [Waiter] in
            guard let held = state.held.removeValue(forKey: id) else { return [] }
            state.available += held.count
            var granted: [Waiter] = []
            while let first = state.waiting.first, first.count <= state.available {
                state.waiting.removeFirst()
                state.available -= first.count
                state.held[first.id] = (first.holder, first.count)
                granted.append(first)
            }
            return granted
        }
        for waiter in granted { waiter.continuation.resume() }
    }

    private func expire(_ id: UInt64) {
        let expired = state.withLock { state -> (Waiter, String)? in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = state.waiting.remove(at: index)
            let holders = state.held.values.map { "\($0.holder) (\($0.count))" }.sorted().joined(separator: ", ")
            return (waiter, holders)
        }
        guard let (waiter, holders) = expired else { return }
        waiter.continuation.resume(
            throwing: ConnectionBudgetExhausted(
                description: "\(waiter.holder) waited \(Self.waitLimit) for \(waiter.count) of the test cluster's \(capacity) "
                    + "fixture connections; held by: \(holders)"))
    }
}

/// Connections taken from a `ConnectionBudget`; `release()` gives them back, at the latest when the lease goes.
public final class ConnectionLease: Sendable {
    private let budget: ConnectionBudget
    private let id: UInt64

    fileprivate init(budget: ConnectionBudget, id: UInt64) {
        self.budget = budget
        self.id = id
    }

    deinit {
        budget.release(id)
    }

    /// Gives the connections back; calling it again does nothing.
    public func release() {
        budget.release(id)
    }
}

/// A fixture waited `ConnectionBudget.waitLimit` for connections: some test holds them far too long.
public struct ConnectionBudgetExhausted: Error, CustomStringConvertible {
    public let description: String
}
