import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// Why a transaction may run on an event loop's connection (docs/architecture.md, "Where statements run")
//
// A transaction held across asynchronous steps on a pooled connection (`ReservedConnection`) costs two
// thread hand-offs per round trip: the request's task wakes the worker that owns the connection, the worker
// blocks in libpq and then wakes the loop again. A keyed write is three round trips and an atomic batch of
// n operations n + 2, so those hand-offs, not PostgreSQL, were most of their time. Here the same
// transaction runs on one of the loop's own non-blocking connections: each round trip is sent from the
// loop's thread and its answer read there when epoll reports it, with the same statements in the same
// round trips (`UnsentStatements`).
//
// What it cannot do is run a blocking body (`withConnection`): that would block the loop's thread. It
// throws `LoopReservation.needsPooledConnection` instead and remembers that it did (`neededPooledConnection`,
// which holds even when a caller swallowed the error); the holder ends the transaction without committing
// and runs it again on a pooled connection, as it would after losing a race.

/// One of an event loop's connections held for one transaction (`LoopConnections.reserve()`); release it
/// when done. Use it on the loop's thread only: from anywhere else, or for a blocking body, its methods
/// throw `needsPooledConnection`, and from then on `neededPooledConnection` is true.
public final class LoopReservation: TransactionRunner, @unchecked Sendable {
    /// Thrown for what only a pooled connection can do; run the whole transaction again on one.
    public static let needsPooledConnection = PostgresError(
        kind: .protocolViolation, message: "this transaction needs a pooled connection (a blocking body, or another thread)")

    // `@unchecked Sendable` invariant: `connection` and `isReleased` are touched only on `thread` (every
    // method checks); `unsent` is locked, as a holder may queue statements from anywhere.
    private let connection: LoopConnection
    private let thread: pthread_t
    private let giveBack: (LoopConnection) -> Void
    private var isReleased = false
    private let refused = Atomic<Bool>(false)
    private let unsent = Mutex(UnsentStatements())

    init(connection: LoopConnection, thread: pthread_t, giveBack: @escaping (LoopConnection) -> Void) {
        self.connection = connection
        self.thread = thread
        self.giveBack = giveBack
    }

    /// Whether something asked for what only a pooled connection can do: the transaction must not commit,
    /// and runs again on a pooled connection.
    public var neededPooledConnection: Bool { refused.load(ordering: .relaxed) }

    private func refuse() -> PostgresError {
        refused.store(true, ordering: .relaxed)
        return Self.needsPooledConnection
    }

    /// Always throws `needsPooledConnection`: a blocking body must not run on the loop's thread.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        throw refuse()
    }

    /// Runs one statement in the transaction, with the statements still unsent in the same round trip.
    public func query(_ query: Query) async throws -> QueryResult {
        let batch = unsent.withLock { $0.takeAll() }
        return try await send(batch, then: [query])[0]
    }

    public func deferUntilCommit(_ query: Query) {
        unsent.withLock { $0.deferUntilCommit(query) }
    }

    public func sendWithNext(_ query: Query) -> PendingAnswer {
        unsent.withLock { $0.sendWithNext(query) }
    }

    /// Sends what is unsent, unless the transaction must move to the pool: then nothing more is sent (a
    /// statement sent ahead would only be answered to be thrown away) and this throws `needsPooledConnection`.
    public func flush() async throws {
        // Left unsent: a scope whose opening never went needs no ROLLBACK either.
        guard !neededPooledConnection else { throw Self.needsPooledConnection }
        let batch = unsent.withLock { $0.takeAll() }
        guard !batch.isEmpty else { return }
        _ = try await send(batch, then: [])
    }

    public func transaction<T: Sendable>(
        isolation: IsolationLevel = .readCommitted,
        commitIf shouldCommit: (T) -> Bool = { _ in true },
        _ body: () async throws -> T
    ) async throws -> T {
        let scope = unsent.withLock { $0.open(isolation: isolation) }
        return try await UnsentStatements.run(scope, commitIf: shouldCommit, body, close: close)
    }

    /// Hands the connection back to its loop; a transaction left open there closes the connection.
    public func release() {
        guard isOnThread, !isReleased else { return }
        isReleased = true
        giveBack(connection)
    }

    private var isOnThread: Bool { pthread_equal(thread, pthread_self()) != 0 }

    /// Ends `scope` with what `UnsentStatements.close` says to send; a COMMIT is refused (and the scope
    /// rolled back) when the transaction failed inside, or when it asked for a pooled connection (then this
    /// throws `needsPooledConnection`, whatever its body answered).
    private func close(_ scope: TransactionScope, committing: Bool) async throws {
        let isRefused = committing && neededPooledConnection
        let isCommitting = committing && !isRefused
        if let toSend = unsent.withLock({ $0.close(scope, committing: isCommitting) }) {
            let batch = unsent.withLock { $0.takeAll() } + toSend
            if isCommitting {
                try await commit(batch, closing: scope)
            } else {
                _ = try await send(batch, then: [])
            }
        }
        if isRefused { throw Self.needsPooledConnection }
    }

    /// Sends `batch`, which ends with `scope`'s COMMIT (or RELEASE); refused when the transaction failed inside.
    private func commit(_ batch: UnsentStatements.UnsentBatch, closing scope: TransactionScope) async throws {
        if isOnThread, connection.isTransactionFailed {
            batch.fail(Self.failedInside)
            _ = try? await send(.none, then: [scope.rollback])
            throw Self.failedInside
        }
        do {
            _ = try await send(batch, then: [])
        } catch {
            // A deferred statement failed, so the COMMIT never ran: end the scope here, as a rollback would.
            if isOnThread, connection.isInTransaction { _ = try? await send(.none, then: [scope.rollback]) }
            throw error
        }
    }

    static let failedInside = PostgresError(kind: .server, message: "transaction failed inside its body; rolled back")

    /// Sends `batch` and then `own` in one round trip on the loop's thread; answers `own`'s rows.
    private func send(_ batch: UnsentStatements.UnsentBatch, then own: [Query]) async throws -> [QueryResult] {
        guard isOnThread, !isReleased else {
            let error = refuse()
            batch.fail(error)
            throw error
        }
        let outcomes: [Result<QueryResult, PostgresError>]
        do {
            outcomes = try await withCheckedThrowingContinuation { continuation in
                guard connection.state == .idle else {
                    let state = connection.state
                    return continuation.resume(
                        throwing: PostgresError(
                            kind: state == .broken ? .connectionLost : .protocolViolation,
                            message: state == .broken ? "connection is closed" : "one statement at a time on a reserved connection"))
                }
                connection.start(LoopPipeline(queries: batch.queries + own) { continuation.resume(with: $0) })
            }
        } catch let error as PostgresError {
            batch.fail(error)
            throw error
        }
        return try batch.finish(outcomes)
    }
}
