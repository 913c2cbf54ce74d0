import Postgres

/// One request's session with PostgreSQL: where its statements run, passed to every handler explicitly.
///
/// Typed records arrive as plain columns that `PlainRecord` writes as JSON straight from libpq's buffers;
/// generic documents, `_embed`/`_expand` and the change feed arrive as JSON text that PostgreSQL rendered,
/// passed through without decoding. Either way `numeric(14,2)` keeps its two decimals.
///
/// A request starts on its event loop's session (`LoopConnections`: single statements without a thread
/// hop, everything else on the pool). `withinTransaction` hands its body a session on one reserved
/// connection inside one transaction, and whatever the body passes that session to (a route's handler, the
/// operations of a batch) runs in that transaction: that is how an idempotency key is stored atomically
/// with the write it protects, and how a batch is all-or-nothing. docs/architecture.md shows the path.
struct Database: Sendable {
    let pool: ConnectionPool
    /// The ledger every statement of this session reads and writes (docs/households.md): ledger 1 until a
    /// request's credentials and path choose another (`scoped(to:)`).
    private(set) var ledger: LedgerID
    /// Who the request acts for and what they may do in `ledger` (`Access`): anyone, before the server has users.
    private(set) var caller: Caller = .anyone
    /// Where answers too large to hold are read from while they are sent (`streamedAnswer`).
    let streams: StreamSettings
    /// Where this session's statements run: a loop's connections, the pool, or the open transaction.
    private let runner: any StatementRunner
    /// The connection holding this session's transaction open; nil outside one.
    private let reserved: (any TransactionRunner)?

    /// How many times a transaction that lost a race to a concurrent write is run again before giving up.
    static let concurrentWriteAttempts = 3

    /// A session outside any transaction whose single statements go to `runner` (by default, the pool).
    init(pool: ConnectionPool, streams: StreamSettings, runner: (any StatementRunner)? = nil, ledger: LedgerID = .first) {
        self.pool = pool
        self.streams = streams
        self.runner = runner ?? pool
        self.ledger = ledger
        reserved = nil
    }

    private init(pool: ConnectionPool, streams: StreamSettings, reserved: any TransactionRunner, ledger: LedgerID, caller: Caller) {
        self.pool = pool
        self.streams = streams
        runner = reserved
        self.reserved = reserved
        self.ledger = ledger
        self.caller = caller
    }

    /// The same session acting on `ledger`: what a request's access check answers once it knows the ledger.
    func scoped(to ledger: LedgerID) -> Database {
        var session = self
        session.ledger = ledger
        return session
    }

    /// The same session acting on `ledger` for `caller`.
    func scoped(to ledger: LedgerID, for caller: Caller) -> Database {
        var session = scoped(to: ledger)
        session.caller = caller
        return session
    }

    /// Whether this session's statements run in a transaction it holds open (`withinTransaction`).
    var isInTransaction: Bool { reserved != nil }

    /// Runs `body` on this session's connection: the transaction's, or else a pooled one.
    func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await runner.withConnection(body)
    }

    /// Runs one statement in this session: in its transaction, or else on the event loop's own connections.
    func query(_ query: Query) async throws -> QueryResult {
        try await runner.query(query)
    }

    /// Queues `query` to run at the end of this session's transaction, in the same round trip as its COMMIT
    /// (`ReservedConnection.deferUntilCommit`): for a write whose rows nobody reads before the commit, such
    /// as an idempotency key's stored answer. When it fails, the commit fails with its error (and a lost race
    /// runs the transaction again, as any statement's would); when the transaction rolls back, it never runs.
    func deferUntilCommit(_ query: Query) {
        guard let reserved else { preconditionFailure("deferUntilCommit outside withinTransaction") }
        reserved.deferUntilCommit(query)
    }

    /// Queues `query` to go ahead of this transaction's next statement, in its round trip
    /// (`TransactionRunner.sendWithNext`): for a statement whose answer can wait, such as an idempotency
    /// key's claim made alongside the write it guards. `answer(to:)` reads it.
    func sendWithNext(_ query: Query) -> PendingAnswer {
        guard let reserved else { preconditionFailure("sendWithNext outside withinTransaction") }
        return reserved.sendWithNext(query)
    }

    /// The rows of a statement queued by `sendWithNext`, sending it now if no statement took it along yet.
    func answer(to pending: PendingAnswer) async throws -> QueryResult {
        guard let reserved else { preconditionFailure("answer(to:) outside withinTransaction") }
        return try await reserved.answer(to: pending)
    }

    /// Runs `body` in one database transaction (a savepoint inside this session's): all of it or none of it.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await run { connection in try connection.transaction(body) }
    }

    /// Runs `body` with a session in one REPEATABLE READ transaction on one connection (a savepoint when this
    /// session is in one already), committed only when `shouldCommit` accepts the result.
    ///
    /// REPEATABLE READ makes a write fail (40001) rather than overwrite a row that changed after this
    /// transaction's snapshot, so a precondition checked here still holds when the write lands. The
    /// outermost call runs `body` again, from scratch, when that happens; nothing of a failed attempt was
    /// committed, so the retry is as if the request had arrived a moment later.
    func withinTransaction<T: Sendable>(
        commitIf shouldCommit: @escaping (T) -> Bool,
        _ body: (Database) async throws -> T
    ) async throws -> T {
        if let reserved {
            return try await reserved.transaction(isolation: .repeatableRead, commitIf: shouldCommit) { try await body(self) }
        }
        var attempt = 1
        // On the event loop's own connection when one is free (no thread hand-off per round trip: see
        // LoopReservation), until the body asks for what only a pooled connection can do.
        var mayUseLoop = true
        while true {
            do {
                if mayUseLoop, let reservation = (runner as? LoopConnections)?.reserve() {
                    defer { reservation.release() }
                    do {
                        let value = try await run(body, on: reservation, commitIf: { shouldCommit($0) && !reservation.neededPooledConnection })
                        if !reservation.neededPooledConnection { return value }
                    } catch  where reservation.neededPooledConnection {}
                    // Nothing was committed: run it all again on a pooled connection.
                    mayUseLoop = false
                    continue
                }
                return try await pool.withReservedConnection { reserved in try await run(body, on: reserved, commitIf: shouldCommit) }
            } catch let error where Self.isConcurrentWrite(error) && attempt < Self.concurrentWriteAttempts {
                attempt += 1
            }
        }
    }

    /// `body` in one REPEATABLE READ transaction on `reserved`, with a session whose statements run there.
    private func run<T: Sendable>(
        _ body: (Database) async throws -> T, on reserved: any TransactionRunner, commitIf shouldCommit: (T) -> Bool
    ) async throws -> T {
        try await reserved.transaction(isolation: .repeatableRead, commitIf: shouldCommit) {
            try await body(Database(pool: pool, streams: streams, reserved: reserved, ledger: ledger, caller: caller))
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
