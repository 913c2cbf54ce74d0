import DequeModule
import Foundation

// Why a reservation exists
//
// `withConnection` runs one synchronous body on a pooled connection and gives the connection back. A
// request that must keep one database transaction open across asynchronous steps (record an idempotency
// key, run the route's handler, store its answer; or every operation of a batch) needs the same
// connection for all of them, with Swift code running in between.
//
// A reservation is one pool job that does not end when its first body returns: the worker thread that
// owns the connection stays inside the job and runs, one after another, the bodies the reservation's
// holder sends it, until the holder releases it. The connection therefore still never leaves its thread,
// and the holder's task is suspended (holding no thread) while each body runs. The worker's usual tidying
// afterwards rolls back any transaction the holder left open.

/// One pooled connection held across several jobs; see `ConnectionPool.withReservedConnection`.
///
/// Opening a transaction or savepoint sends nothing by itself: its BEGIN (or SAVEPOINT) travels with the
/// next job, and one that ends before any job ran sends nothing at all. So a transaction of n statements
/// costs n + 1 hand-offs to the worker thread (the last one its COMMIT), not n + 2.
public final class ReservedConnection: StatementRunner {
    private struct Job {
        let run: (Connection) -> Void
        let fail: (PostgresError) -> Void
    }

    private struct State {
        var jobs: Deque<Job> = []
        var isReleased = false
        /// How many transactions and savepoints the holder has open, sent or not.
        var depth = 0
        /// Opening statements not sent yet, outermost first; the next job runs them before its body.
        var unsent: [String] = []
    }

    private let condition = NSCondition()
    // Only touched with `condition` locked.
    private nonisolated(unsafe) var state = State()

    init() {}

    /// Runs `body` on the reserved connection, on its worker thread.
    ///
    /// Throws `.poolClosed` after the reservation was released, or whatever `body` throws.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            let opening = state.unsent.joined(separator: "; ")
            state.unsent.removeAll()
            let job = Job(
                run: { connection in
                    continuation.resume(
                        with: Result {
                            if !opening.isEmpty { try connection.execute(script: opening) }
                            return try body(connection)
                        })
                },
                fail: { error in continuation.resume(throwing: error) })
            guard !state.isReleased else {
                condition.unlock()
                return job.fail(PostgresError(kind: .poolClosed, message: "the reserved connection was already released"))
            }
            state.jobs.append(job)
            condition.signal()
            condition.unlock()
        }
    }

    /// Runs one statement on the reserved connection, inside whatever transaction it holds open.
    public func query(_ query: Query) async throws -> QueryResult {
        try await withConnection { connection in try connection.query(query) }
    }

    /// Runs `body` inside a transaction on this connection, or inside a savepoint when one is already open.
    ///
    /// `body` may await anything, including further jobs on this connection. The transaction (or savepoint)
    /// commits when `body` returns a value that `shouldCommit` accepts, and rolls back when it returns any
    /// other value or throws, so a caller can keep an answer it must not persist (an error response, say)
    /// without turning it into an exception.
    public func transaction<T: Sendable>(
        isolation: IsolationLevel = .readCommitted,
        commitIf shouldCommit: (T) -> Bool = { _ in true },
        _ body: () async throws -> T
    ) async throws -> T {
        let scope = condition.withLock {
            let scope = TransactionScope(isNested: state.depth > 0, isolation: isolation)
            state.depth += 1
            state.unsent.append(scope.begin)
            return scope
        }
        let value: T
        do {
            value = try await body()
        } catch {
            // The original error matters more than a rollback that fails on a broken connection.
            _ = try? await close(scope, committing: false)
            throw error
        }
        try await close(scope, committing: shouldCommit(value))
        return value
    }

    /// Ends `scope`: nothing to send when its opening statement was never sent, else COMMIT (or RELEASE),
    /// refused when the transaction failed inside, or ROLLBACK.
    private func close(_ scope: TransactionScope, committing: Bool) async throws {
        let wasSent = condition.withLock {
            state.depth -= 1
            guard state.unsent.last == scope.begin else { return true }
            state.unsent.removeLast()
            return false
        }
        guard wasSent else { return }
        try await withConnection { connection in
            if committing { try connection.checkNotFailed() }
            try connection.execute(script: committing ? scope.commit : scope.rollback)
        }
    }

    /// Called by the pool's worker: runs the holder's jobs until `release()`.
    func serve(on connection: Connection) {
        while true {
            condition.lock()
            while state.jobs.isEmpty && !state.isReleased { condition.wait() }
            let job = state.jobs.popFirst()
            condition.unlock()
            guard let job else { return }
            job.run(connection)
        }
    }

    /// Ends the reservation once the jobs already sent have run; the worker then tidies the connection (and
    /// rolls back a transaction left open). Later jobs fail with `.poolClosed`; calling it again does nothing.
    public func release() {
        condition.withLock {
            state.isReleased = true
            condition.signal()
        }
    }
}

extension ConnectionPool {
    /// Holds one pooled connection for the whole of `body`, so that several jobs, with asynchronous work
    /// in between, run on the same connection and so in the same transaction if one is open.
    ///
    /// The connection counts as in use until `body` ends; the checkout timeout applies to getting it.
    public func withReservedConnection<T: Sendable>(_ body: (ReservedConnection) async throws -> T) async throws -> T {
        let reserved = try await reserve()
        defer { reserved.release() }
        return try await body(reserved)
    }

    /// Holds one pooled connection until `release()` is called, for work that outlives the caller's scope:
    /// a streamed answer whose statements run while the server sends its body. The caller must release it
    /// on every path; until then the connection counts as in use and serves nobody else.
    ///
    /// The checkout timeout applies to getting it.
    public func reserve() async throws -> ReservedConnection {
        let reserved = ReservedConnection()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enqueue(
                PoolJob(
                    enqueuedAt: .now,
                    run: { connection in
                        continuation.resume()
                        reserved.serve(on: connection)
                    },
                    fail: { error in continuation.resume(throwing: error) }))
        }
        return reserved
    }
}
