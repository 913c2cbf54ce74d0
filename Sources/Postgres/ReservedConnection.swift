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
/// Statements that need not wait for an answer travel with the next one in one round trip (libpq pipeline
/// mode, `Connection.pipeline`): opening a transaction or savepoint sends nothing by itself, its BEGIN (or
/// SAVEPOINT) goes with the next job; a statement deferred to the commit (`deferUntilCommit`) goes with the
/// COMMIT; and a scope that ends before any of its statements ran sends nothing at all. So a transaction
/// of n statements costs n + 1 hand-offs to the worker thread (the last one its COMMIT) and as many round
/// trips, not n + 2 or more.
public final class ReservedConnection: TransactionRunner {
    private struct Job {
        let run: (Connection) -> Void
        let fail: (PostgresError) -> Void
    }

    private struct State {
        var jobs: Deque<Job> = []
        var isReleased = false
        /// Why the pool could not hand over a connection, once it said so; later jobs fail with it.
        var failure: PostgresError?
        /// Open scopes and the statements the next job sends ahead of its own.
        var unsent = UnsentStatements()
    }

    private let condition = NSCondition()
    // Only touched with `condition` locked.
    private nonisolated(unsafe) var state = State()

    init() {}

    /// Runs `body` on the reserved connection, on its worker thread, after the statements still unsent.
    ///
    /// Throws `.poolClosed` after the reservation was released, the pool's error when it could not hand over
    /// a connection, or whatever `body` throws.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await submit { connection, unsent in
            _ = try unsent.finish(try connection.pipelineOutcomes(unsent.queries))
            return try body(connection)
        }
    }

    /// Runs one statement on the reserved connection, inside whatever transaction it holds open; the
    /// statements still unsent go in the same round trip.
    public func query(_ query: Query) async throws -> QueryResult {
        try await submit { connection, unsent in
            if unsent.isEmpty { return try connection.query(query) }
            return try unsent.finish(try connection.pipelineOutcomes(unsent.queries + [query]))[0]
        }
    }

    public func deferUntilCommit(_ query: Query) {
        condition.withLock { state.unsent.deferUntilCommit(query) }
    }

    public func sendWithNext(_ query: Query) -> PendingAnswer {
        condition.withLock { state.unsent.sendWithNext(query) }
    }

    public func flush() async throws {
        try await submit { connection, unsent in
            _ = try unsent.finish(try connection.pipelineOutcomes(unsent.queries))
        }
    }

    /// Queues a job that gets the statements still unsent (taken in the same lock, so in order).
    private func submit<T: Sendable>(_ body: @escaping (Connection, UnsentStatements.UnsentBatch) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            let unsent = state.unsent.takeAll()
            let job = Job(
                run: { connection in
                    continuation.resume(
                        with: Result {
                            do { return try body(connection, unsent) } catch let error as PostgresError {
                                unsent.fail(error)
                                throw error
                            }
                        })
                },
                fail: { error in
                    unsent.fail(error)
                    continuation.resume(throwing: error)
                })
            guard !state.isReleased else {
                let error = state.failure ?? PostgresError(kind: .poolClosed, message: "the reserved connection was already released")
                condition.unlock()
                return job.fail(error)
            }
            state.jobs.append(job)
            condition.signal()
            condition.unlock()
        }
    }

    public func transaction<T: Sendable>(
        isolation: IsolationLevel = .readCommitted,
        commitIf shouldCommit: (T) -> Bool = { _ in true },
        _ body: () async throws -> T
    ) async throws -> T {
        let scope = condition.withLock { state.unsent.open(isolation: isolation) }
        return try await UnsentStatements.run(scope, commitIf: shouldCommit, body, close: close)
    }

    /// Ends `scope` with what `UnsentStatements.close` says to send: COMMIT (or RELEASE) with the deferred
    /// statements before it in one round trip, refused when the transaction failed inside; or ROLLBACK.
    private func close(_ scope: TransactionScope, committing: Bool) async throws {
        guard let toSend = condition.withLock({ state.unsent.close(scope, committing: committing) }) else { return }
        // Not `withConnection`, which would send these statements again as unsent ones: they were taken above.
        try await submit { connection, unsent in
            let batch = unsent + toSend
            if committing {
                try connection.checkNotFailed()
                do {
                    _ = try batch.finish(try connection.pipelineOutcomes(batch.queries))
                } catch {
                    // A deferred statement failed, so the COMMIT never ran: end the scope here, as a rollback would.
                    if connection.isInTransaction { try? connection.execute(script: scope.rollback.sql) }
                    throw error
                }
            } else {
                _ = try batch.finish(try connection.pipelineOutcomes(batch.queries))
            }
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

    /// Called when the pool could not hand over a connection (checkout timeout, database down, shutdown):
    /// the jobs sent so far and every later one fail with `error`.
    func fail(with error: PostgresError) {
        let waiting = condition.withLock {
            state.isReleased = true
            state.failure = error
            defer { state.jobs.removeAll() }
            return state.jobs
        }
        for job in waiting { job.fail(error) }
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
    /// `body` starts at once, without waiting for the connection: its first job waits in the reservation
    /// until a worker takes it up, which saves a hand-off per transaction. When none comes within the
    /// checkout timeout (or the database is down), that job fails with the pool's error.
    public func withReservedConnection<T: Sendable>(_ body: (ReservedConnection) async throws -> T) async throws -> T {
        let reserved = ReservedConnection()
        enqueue(
            PoolJob(
                enqueuedAt: .now,
                run: { connection in reserved.serve(on: connection) },
                fail: { error in reserved.fail(with: error) }))
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
