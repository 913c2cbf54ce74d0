import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

@Suite("LoopConnections: single statements on an event loop's own non-blocking connections")
struct LoopConnectionsTests {
    /// A pool, a reactor thread with `count` of the pool's connections attached, and `body` run as a task
    /// on that thread, the way a request handler runs on its server loop.
    private func withLoop<T: Sendable>(
        poolSize: Int = 2, count: Int, url: String? = nil, checkoutTimeout: Duration = .seconds(30),
        _ body: @escaping @Sendable (LoopSession) async throws -> T
    ) async throws -> T {
        let resolvedURL: String
        if let url { resolvedURL = url } else { resolvedURL = try await TestDatabase.empty() }
        let pool = ConnectionPool(
            configuration: PoolConfiguration(url: resolvedURL, size: poolSize, checkoutTimeout: checkoutTimeout),
            logger: Logger(label: "LoopConnectionsTests"))
        let result: Result<T, any Error>
        do {
            result = .success(
                try await TestReactor.withLoopConnections(pool: pool, count: count) { try await body(LoopSession(loop: $0, pool: pool)) })
        } catch {
            result = .failure(error)
        }
        await pool.shutdown()
        return try result.get()
    }

    /// What a request handler on the loop has: the loop's connections for single statements, the pool for
    /// the rest.
    private struct LoopSession: Sendable {
        let loop: LoopConnections
        let pool: ConnectionPool

        func query(_ query: Query) async throws -> QueryResult { try await loop.query(query) }

        func withConnection<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
            try await pool.withConnection(body)
        }

        var statistics: (size: Int, inUse: Int, waiting: Int) { pool.statistics }
    }

    private final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    }

    @Test func answersWhileEveryPooledConnectionIsBusy() async throws {
        let sleeperDone = Flag()
        let (answer, doneBefore) = try await withLoop(poolSize: 1, count: 1) { pool in
            // Connected first: on a loaded machine a first connect alone can outlast the sleep below.
            _ = try await pool.query("SELECT 1")
            // The pool's only connection sleeps; a statement that went through the pool would wait for it.
            let sleeper = Task {
                try await pool.withConnection { try $0.execute("SELECT pg_sleep(2)") }
                sleeperDone.set()
            }
            try await waitUntil("the pool's connection is busy") { pool.statistics.inUse == 1 }
            let answer = try await pool.query("SELECT \(41)::int + 1")[0].decode(Int.self, at: 0)
            let doneBefore = sleeperDone.isSet
            try await sleeper.value
            return (answer, doneBefore)
        }
        #expect(answer == 42)
        #expect(!doneBefore, "the statement waited for the pool instead of using the loop's own connection")
    }

    @Test func bindsParametersAndNulls() async throws {
        let row = try await withLoop(count: 1) { pool in
            let missing: String? = nil
            let result = try await pool.query("SELECT \(missing)::text IS NULL, \("it's")::text, \(Int64(1) << 40)::bigint")
            return (try result[0].decode(Bool.self, at: 0), try result[0].decode(String.self, at: 1), try result[0].decode(Int64.self, at: 2))
        }
        #expect(row.0)
        #expect(row.1 == "it's")
        #expect(row.2 == 1 << 40)
    }

    @Test func serverErrorsArriveWithTheirStateAndLeaveTheConnectionUsable() async throws {
        let (division, syntax, after) = try await withLoop(count: 1) { pool in
            // An error while executing, and one while preparing (the text never becomes a statement).
            let division = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1 / \(0)") }
            let syntax = await #expect(throws: PostgresError.self) { try await pool.query("SELEKT 1") }
            let after = try await pool.query("SELECT \(7)::int")[0].decode(Int.self, at: 0)
            return (division?.sqlState, syntax?.sqlState, after)
        }
        #expect(division == "22012")
        #expect(syntax == "42601")
        #expect(after == 7)
    }

    @Test func aStatementPreparedBeforeASchemaChangeIsPreparedAgain() async throws {
        let columns = try await withLoop(count: 1) { pool in
            try await pool.withConnection { try $0.execute(script: "CREATE TABLE loop_stale (a int); INSERT INTO loop_stale VALUES (1)") }
            let before = try await pool.query("SELECT * FROM loop_stale").columnNames
            try await pool.withConnection { try $0.execute(script: "ALTER TABLE loop_stale ADD COLUMN b int") }
            // The cached plan's result type changed (0A000): the same text is prepared afresh and answers.
            let after = try await pool.query("SELECT * FROM loop_stale").columnNames
            return (before, after)
        }
        #expect(columns.0 == ["a"])
        #expect(columns.1 == ["a", "b"])
    }

    @Test func aTerminatedBackendIsReplacedWithoutFailingLaterStatements() async throws {
        let (first, second, answers) = try await withLoop(count: 1) { pool in
            let first = try await pool.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
            try await pool.withConnection { try $0.execute("SELECT pg_terminate_backend(\(first))") }
            // The loop sees the backend's EOF on its own; until it has, a statement may still meet the dead one.
            try await waitUntil("a statement answers again") { (try? await pool.query("SELECT 1")) != nil }
            var answers: [Int] = []
            for value in 0..<5 { answers.append(try await pool.query("SELECT \(value)::int")[0].decode(Int.self, at: 0)) }
            let second = try await pool.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
            return (first, second, answers)
        }
        #expect(first != second)
        #expect(answers == [0, 1, 2, 3, 4])
    }

    @Test func withoutAReachableServerStatementsFailLikeThePoolDoes() async throws {
        // Nothing listens on this socket folder, so connecting fails at once; the statement goes to the
        // pool, which reports the outage as a connection problem (the API's 503).
        let error = try await withLoop(count: 1, url: "postgresql:///budget?host=/nonexistent-loop-test&connect_timeout=2") { pool in
            await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        }
        #expect(error?.isConnectionProblem == true)
    }

    @Test func aStatementWaitingForABusyConnectionFailsAtTheCheckoutDeadline() async throws {
        let (waited, stuckAnswer) = try await withLoop(count: 1, checkoutTimeout: .seconds(1)) { pool in
            // Both kinds of connection up first: on a loaded machine connecting alone can outlast 1 s.
            try await waitUntil("the loop connection answers") { (try? await pool.query("SELECT 1")) != nil }
            try await waitUntil("a pooled connection answers") {
                (try? await pool.withConnection { try $0.query("SELECT 1").count }) == 1
            }
            // The loop's one connection is busy for 3 s; the next statement waits for it, and gives up at 1 s.
            // `async let` runs on the reactor too (a child task keeps its parent's executor preference).
            async let stuck = pool.query("SELECT pg_sleep(3), \(1)::int")[0].decode(Int.self, at: 1)
            try await waitUntil("the first statement holds the connection") {
                let running = try? await pool.withConnection { connection in
                    // This database's sessions only: other tests sleep in theirs, on the same cluster.
                    try connection.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(3)%'")[0]
                        .decode(Int.self, at: 0)
                }
                return running == 1
            }
            let waited = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 2") }
            return (waited, try await stuck)
        }
        #expect(waited?.kind == .poolTimeout)
        #expect(waited?.isConnectionProblem == true)
        #expect(stuckAnswer == 1)
    }

    @Test func statementsOffTheLoopThreadUseThePool() async throws {
        let url = try await TestDatabase.empty()
        let pool = ConnectionPool(configuration: PoolConfiguration(url: url, size: 1), logger: Logger(label: "LoopConnectionsTests"))
        let testReactor = try TestReactor()
        let reactor = testReactor.loop
        defer { testReactor.stop() }
        let loop = await Task(executorPreference: reactor) { LoopConnections(reactor: reactor, pool: pool, count: 1) }.value
        // Called from the cooperative pool, not the reactor's thread: the statement must not touch the loop's
        // connections, so it runs on the pool's only connection.
        let offLoop = try await loop.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
        let pooled = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0) }
        await Task(executorPreference: reactor) { loop.close() }.value
        await pool.shutdown()
        #expect(offLoop == pooled)
    }
}
