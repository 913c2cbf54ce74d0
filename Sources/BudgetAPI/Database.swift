import Postgres

/// The budget API's view of PostgreSQL: run a query and take its rows.
///
/// Typed records arrive as plain columns that `PlainRecord` writes as JSON straight from libpq's buffers;
/// generic documents, `_embed`/`_expand` and the change feed arrive as JSON text that PostgreSQL rendered,
/// passed through without decoding. Either way `numeric(14,2)` keeps its two decimals.
///
/// Every query of the API goes through `run`, so that `withinTransaction` can put all the database work of
/// a request (its handler included, however many queries it makes) into one transaction on one connection:
/// that is how an idempotency key is stored atomically with the write it protects, and how a batch is
/// all-or-nothing, without the handlers knowing.
struct Database: Sendable {
    let pool: ConnectionPool

    /// The connection the current task's request holds for its transaction, if any (see `withinTransaction`).
    @TaskLocal static var reserved: ReservedConnection?

    /// How many times a transaction that lost a race to a concurrent write is run again before giving up.
    static let concurrentWriteAttempts = 3

    /// Runs `body` on the request's reserved connection if it holds one, else on any pooled connection.
    func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        if let reserved = Self.reserved { return try await reserved.run(body) }
        return try await pool.withConnection(body)
    }

    /// Runs one statement: on the request's reserved connection if it holds one, else outside any
    /// transaction on the event loop's own connections (`ConnectionPool.query`), without a thread hop.
    func query(_ query: Query) async throws -> QueryResult {
        if let reserved = Self.reserved { return try await reserved.run { connection in try connection.query(query) } }
        return try await pool.query(query)
    }

    /// Runs `body` in one database transaction (a savepoint inside a reserved one): all of it or none of it.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await run { connection in try connection.transaction(body) }
    }

    /// Runs `body` with every query it causes, through `run`, in one REPEATABLE READ transaction on one
    /// connection, committed only when `shouldCommit` accepts the result; nested calls become savepoints.
    ///
    /// REPEATABLE READ makes a write fail (40001) rather than overwrite a row that changed after this
    /// transaction's snapshot, so a precondition checked here still holds when the write lands. The
    /// outermost call runs `body` again, from scratch, when that happens; nothing of a failed attempt was
    /// committed, so the retry is as if the request had arrived a moment later.
    func withinTransaction<T: Sendable>(
        commitIf shouldCommit: @escaping (T) -> Bool,
        _ body: () async throws -> T
    ) async throws -> T {
        if let reserved = Self.reserved {
            return try await reserved.transaction(commitIf: shouldCommit, body)
        }
        var attempt = 1
        while true {
            do {
                return try await pool.withReservedConnection { reserved in
                    try await Self.$reserved.withValue(reserved) {
                        try await reserved.transaction(isolation: .repeatableRead, commitIf: shouldCommit, body)
                    }
                }
            } catch let error where Self.isConcurrentWrite(error) && attempt < Self.concurrentWriteAttempts {
                attempt += 1
            }
        }
    }

    private static func isConcurrentWrite(_ error: any Error) -> Bool {
        switch error {
        case APIError.concurrentWrite: true
        case let error as PostgresError: error.isConcurrentWrite
        default: false
        }
    }
}

extension PostgresError {
    /// A serialization failure or deadlock: the transaction lost a race and may simply be run again.
    var isConcurrentWrite: Bool {
        sqlState == SQLState.serializationFailure || sqlState == SQLState.deadlockDetected
    }
}

extension QueryResult {
    /// The first column of the first row as bytes, or nil for no row.
    func firstJSON() -> [UInt8]? {
        count > 0 ? self[0].bytes(at: 0) : nil
    }
}

extension Connection {
    /// The first column of the first row of `query`, as bytes.
    func json(_ query: Query) throws -> [UInt8]? {
        try self.query(query).firstJSON()
    }
}
