/// Where a caller's statements run: the pool's worker threads, an event loop's own connections, or one
/// reserved connection holding a transaction open.
///
/// The caller chooses and passes it down (the API keeps one in each request's database session); nothing
/// looks it up from the thread or task it happens to run on.
public protocol StatementRunner: Sendable {
    /// Runs one statement and answers its rows.
    func query(_ query: Query) async throws -> QueryResult

    /// Runs `body` on one connection, on a thread where blocking libpq calls are allowed.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T
}

extension ConnectionPool: StatementRunner {
    /// Runs one statement outside any transaction, on a pooled connection.
    public func query(_ query: Query) async throws -> QueryResult {
        try await withConnection { connection in try connection.query(query) }
    }
}

/// One connection held across asynchronous steps, with a transaction open on it: a pool worker's
/// (`ReservedConnection`) or an event loop's (`LoopReservation`). Statements that need not wait for an
/// answer travel with the next one (`UnsentStatements`).
public protocol TransactionRunner: StatementRunner {
    /// Runs `body` inside a transaction on this connection, or inside a savepoint when one is already open.
    ///
    /// `body` may await anything, including further statements on this connection. The transaction (or
    /// savepoint) commits when `body` returns a value that `shouldCommit` accepts, and rolls back when it
    /// returns any other value or throws, so a caller can keep an answer it must not persist (an error
    /// response, say) without turning it into an exception.
    func transaction<T: Sendable>(
        isolation: IsolationLevel, commitIf shouldCommit: (T) -> Bool, _ body: () async throws -> T
    ) async throws -> T

    /// Queues `query` to run at the end of the innermost open transaction or savepoint, in the round trip of
    /// its COMMIT (or RELEASE), or with whatever statement runs next. Its rows are not kept; when it fails,
    /// the commit fails with its error and the transaction rolls back. Nothing is sent when the scope rolls
    /// back first.
    func deferUntilCommit(_ query: Query)

    /// Queues `query` to go ahead of the next statement, in its round trip; its rows (or its error) reach
    /// the answer returned when that trip ends (`flush` sends it at once). When it fails, the statements
    /// after it in that trip fail with its error. Dropped, with an error, when its scope rolls back unsent.
    func sendWithNext(_ query: Query) -> PendingAnswer

    /// Sends whatever is unsent now, in one round trip.
    func flush() async throws
}

extension TransactionRunner {
    /// The rows (or the error) of a statement queued by `sendWithNext`, sending it now if no statement took
    /// it along yet.
    public func answer(to pending: PendingAnswer) async throws -> QueryResult {
        if pending.result == nil { try await flush() }
        guard let result = pending.result else { throw UnsentStatements.neverSent }
        return try result.get()
    }
}
