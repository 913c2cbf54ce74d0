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
