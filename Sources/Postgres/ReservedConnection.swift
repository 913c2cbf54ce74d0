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
public final class ReservedConnection: Sendable {
    private struct Job {
        let run: (Connection) -> Void
        let fail: (PostgresError) -> Void
    }

    private struct State {
        var jobs: Deque<Job> = []
        var isReleased = false
    }

    private let condition = NSCondition()
    // Only touched with `condition` locked.
    private nonisolated(unsafe) var state = State()

    init() {}

    /// Runs `body` on the reserved connection, on its worker thread.
    ///
    /// Throws `.poolClosed` after the reservation was released, or whatever `body` throws.
    public func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = Job(
                run: { connection in continuation.resume(with: Result { try body(connection) }) },
                fail: { error in continuation.resume(throwing: error) })
            condition.lock()
            guard !state.isReleased else {
                condition.unlock()
                return job.fail(PostgresError(kind: .poolClosed, message: "the reserved connection was already released"))
            }
            state.jobs.append(job)
            condition.signal()
            condition.unlock()
        }
    }

    /// Runs `body` inside a transaction on this connection, or inside a savepoint when one is already open.
    ///
    /// `body` may await anything, including further `run` calls on this connection. The transaction (or
    /// savepoint) commits when `body` returns a value that `shouldCommit` accepts, and rolls back when it
    /// returns any other value or throws, so a caller can keep an answer it must not persist (an error
    /// response, say) without turning it into an exception.
    public func transaction<T: Sendable>(
        isolation: IsolationLevel = .readCommitted,
        commitIf shouldCommit: (T) -> Bool = { _ in true },
        _ body: () async throws -> T
    ) async throws -> T {
        let isNested = try await run { $0.isInTransaction }
        // Same-named savepoints stack in PostgreSQL, as in `Connection.transaction`.
        let savepoint = "budget_savepoint"
        let begin = isNested ? "SAVEPOINT \(savepoint)" : "BEGIN ISOLATION LEVEL \(isolation.sql)"
        try await run { try $0.execute(script: begin) }
        let value: T
        do {
            value = try await body()
        } catch {
            // The original error matters more than a rollback that fails on a broken connection.
            _ = try? await run { try $0.execute(script: isNested ? "ROLLBACK TO SAVEPOINT \(savepoint)" : "ROLLBACK") }
            throw error
        }
        let commits = shouldCommit(value)
        let end = switch (isNested, commits) {
        case (false, true): "COMMIT"
        case (false, false): "ROLLBACK"
        case (true, true): "RELEASE SAVEPOINT \(savepoint)"
        case (true, false): "ROLLBACK TO SAVEPOINT \(savepoint)"
        }
        try await run { connection in
            // COMMIT of a failed transaction silently rolls back; a body that swallowed an error must not look committed.
            if commits && connection.isTransactionFailed {
                throw PostgresError(kind: .server, message: "transaction failed inside its body; rolled back")
            }
            try connection.execute(script: end)
        }
        return value
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

    /// Ends the reservation once the jobs already sent have run; the worker then tidies the connection.
    func release() {
        condition.withLock {
            state.isReleased = true
            condition.signal()
        }
    }
}

/// How much a transaction sees of others committing while it runs (PostgreSQL's levels).
public enum IsolationLevel: Sendable {
    /// Each statement sees what was committed before it began (PostgreSQL's default).
    case readCommitted
    /// Every statement sees one snapshot; a write to a row someone changed since fails with 40001.
    case repeatableRead

    var sql: String {
        switch self {
        case .readCommitted: "READ COMMITTED"
        case .repeatableRead: "REPEATABLE READ"
        }
    }
}

extension ConnectionPool {
    /// Holds one pooled connection for the whole of `body`, so that several jobs, with asynchronous work
    /// in between, run on the same connection and so in the same transaction if one is open.
    ///
    /// The connection counts as in use until `body` ends; the checkout timeout applies to getting it.
    public func withReservedConnection<T: Sendable>(_ body: (ReservedConnection) async throws -> T) async throws -> T {
        let reserved = ReservedConnection()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enqueue(PoolJob(
                enqueuedAt: .now,
                run: { connection in
                    continuation.resume()
                    reserved.serve(on: connection)
                },
                fail: { error in continuation.resume(throwing: error) }))
        }
        defer { reserved.release() }
        return try await body(reserved)
    }
}
