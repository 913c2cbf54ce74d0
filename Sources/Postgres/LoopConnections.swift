import DequeModule
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// The few non-blocking connections of one event loop, for statements its handlers run outside a transaction.
///
/// Why: a statement through `ConnectionPool.withConnection` wakes a worker thread, which blocks in libpq
/// and then wakes the loop again. `perf` showed those two hand-offs per request (context switches, futex
/// and poll wake-ups) as the largest share of the server's CPU on a database read. Here the statement is
/// sent from the loop's own thread, the loop's `epoll_wait` watches the answer arrive alongside its HTTP
/// sockets, and the waiting task resumes on that thread: no hand-off at all.
///
/// The blocking pool stays the backbone: transactions, notifications and everything that holds a
/// connection across statements use it (`withConnection` goes straight there), and so does a statement
/// here whenever no loop connection is up (the database is down) or too many are waiting, so outages
/// answer exactly as the pool does.
/// Connections open one at a time as concurrent statements need them and, once broken, again on a later
/// statement after `reconnectDelay`;
/// connecting never blocks the loop (`PQconnectStartParams`).
///
/// Whoever builds a loop's handlers makes one on that loop's thread and passes it to them as their
/// `StatementRunner`. `@unchecked Sendable` invariant: the connections and the queue are touched only on the
/// thread that made this object (the reactor's); `query` called from any other thread goes to the pool.
public final class LoopConnections: StatementRunner, @unchecked Sendable {
    /// Statements queued here at most before further ones go to the pool.
    static let maxWaiting = 512
    static let reconnectDelay: Duration = .seconds(1)

    let pool: ConnectionPool
    private let thread = pthread_self()
    private var connections: [LoopConnection] = []
    private var waiting: Deque<LoopStatement> = []

    /// Up to `count` connections on `reactor`, each opened by a statement that finds none free (a server
    /// that never runs one holds none); call on the reactor's thread.
    public init(reactor: any Reactor, pool: ConnectionPool, count: Int) {
        self.pool = pool
        connections = (0..<count).map { _ in LoopConnection(reactor: reactor, configuration: pool.configuration) }
        for connection in connections {
            connection.onIdle = { [unowned self] in connectionIsIdle($0) }
            connection.onBroken = { [unowned self] _ in connectionBroke() }
        }
        reactor.everySecond { [weak self] now in self?.expireWaiting(now: now) }
    }

    /// Runs one statement outside any transaction: on this loop's connections when called on its thread (and
    /// resumes there with the rows), else on a pooled connection.
    public func query(_ query: Query) async throws -> QueryResult {
        guard pthread_equal(thread, pthread_self()) != 0 else { return try await pool.query(query) }
        try query.checkSendable()
        return try await withCheckedThrowingContinuation { continuation in
            submit(
                LoopStatement(
                    query: query, sql: query.sql, completion: { continuation.resume(with: $0) }, submittedAt: .now))
        }
    }

    /// One of this loop's connections, held for one transaction (`LoopReservation`), when the caller is on
    /// this loop's thread and a connection is idle; else nil, and the caller reserves a pooled connection.
    /// Never waits: a reservation is worth it only when it saves the hand-offs a pooled one costs.
    public func reserve() -> LoopReservation? {
        guard pthread_equal(thread, pthread_self()) != 0 else { return nil }
        guard let idle = connections.first(where: { $0.state == .idle && !$0.isReserved }) else {
            // Opened for the next one, or a loop that only ever runs transactions would never have any.
            connectAnotherIfNeeded()
            return nil
        }
        idle.isReserved = true
        return LoopReservation(connection: idle, thread: thread) { [unowned self] in giveBack($0) }
    }

    /// Takes back a reserved connection. One left inside a transaction (its holder could not end it) is
    /// closed rather than risk a statement running in that transaction; it reconnects when next needed.
    private func giveBack(_ connection: LoopConnection) {
        connection.isReserved = false
        guard connection.state == .idle else { return }
        guard !connection.isInTransaction else {
            return connection.close(because: PostgresError(kind: .connectionLost, message: "released inside a transaction"))
        }
        connectionIsIdle(connection)
    }

    private func submit(_ statement: LoopStatement) {
        if let idle = connections.first(where: { $0.state == .idle && !$0.isReserved }) {
            return idle.start(statement)
        }
        connectAnotherIfNeeded()
        let isAnyComing = connections.contains { $0.state == .busy || $0.state == .connecting }
        guard isAnyComing, waiting.count < Self.maxWaiting else { return runOnPool(statement) }
        waiting.append(statement)
    }

    private func connectionIsIdle(_ connection: LoopConnection) {
        guard !connection.isReserved else { return }
        if let next = waiting.popFirst() { connection.start(next) }
    }

    private func connectionBroke() {
        // Statements waiting for a connection that will not come go to the pool, which knows about outages.
        guard !connections.contains(where: { $0.state != .broken }) else { return }
        while let statement = waiting.popFirst() { runOnPool(statement) }
    }

    /// Fails statements that waited for a connection longer than the pool's checkout timeout, as the pool
    /// fails its own jobs: a database that hangs (a lock held, every connection stuck) answers 503 in
    /// bounded time rather than holding requests for as long as it hangs.
    private func expireWaiting(now: ContinuousClock.Instant) {
        let timeout = pool.configuration.checkoutTimeout
        while let first = waiting.first, now - first.submittedAt >= timeout {
            waiting.removeFirst()
            first.completion(.failure(PostgresError(kind: .poolTimeout, message: "no database connection became free within \(timeout)")))
        }
    }

    /// Opens one more connection (one never opened, or broken longer than `reconnectDelay` ago) unless
    /// those already connecting will be enough for the statements waiting and the one arriving. So a loop
    /// serving one request at a time holds one connection, and only concurrent statements open the rest.
    private func connectAnotherIfNeeded() {
        let connecting = connections.count { $0.state == .connecting }
        guard waiting.count >= connecting else { return }
        let now = ContinuousClock.now
        let next = connections.first { connection in
            connection.state == .broken && (connection.brokenAt.map { now - $0 >= Self.reconnectDelay } ?? true)
        }
        next?.connect()
    }

    private func runOnPool(_ statement: LoopStatement) {
        let query = statement.query
        pool.enqueue(
            PoolJob(
                enqueuedAt: statement.submittedAt,
                run: { connection in statement.completion(Result { try connection.query(query) }) },
                fail: { error in statement.completion(.failure(error)) }))
    }

    /// Runs `body` on a pooled connection: blocking calls never run on the loop's thread.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await pool.withConnection(body)
    }

    /// Closes every connection, on the reactor's thread as the loop stops; statements waiting or in flight
    /// fail with `.poolClosed`.
    public func close() {
        let error = PostgresError(kind: .poolClosed, message: "the event loop stopped")
        for connection in connections {
            connection.onIdle = { _ in }
            connection.onBroken = { _ in }
            connection.close(because: error)
        }
        while let statement = waiting.popFirst() { statement.completion(.failure(error)) }
    }
}
