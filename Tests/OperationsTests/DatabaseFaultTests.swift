import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport

/// The real server process while its database goes away, comes back, or hangs (docs/operations.md: 503 with
/// `Retry-After` while PostgreSQL is unreachable; the server reconnects by itself).
@Suite struct DatabaseFaultTests {
    /// Requests that each need the database, one of every kind: reads, a pattern search, a write, an
    /// idempotent write, a batch, a conditional write, a feed poll and a long-poll. With the database down
    /// every one must answer 503, none may hang.
    private static let databaseRequests: [(method: String, path: String, body: String?, headers: [(String, String)])] = [
        ("GET", "/categories", nil, []),
        ("GET", "/transactions/1", nil, []),
        ("GET", "/transactions?title_like=a", nil, []),
        ("POST", "/transactions", #"{"categoryId":1,"title":"during outage","amount":1}"#, []),
        ("POST", "/categories", #"{"title":"keyed during outage","amount":1}"#, [("Idempotency-Key", "outage-1")]),
        ("POST", "/batch", #"{"atomic":true,"operations":[{"method":"POST","path":"/categories","body":{"title":"b","amount":1}}]}"#, []),
        ("PATCH", "/categories/1", #"{"amount":2}"#, [("If-Match", #""1""#)]),
        ("GET", "/changes", nil, []),
        ("GET", "/changes?wait=5", nil, []),
    ]

    @Test func stoppedPostgreSQLMeans503WithRetryAfterAndTheServerRecoversByItself() async throws {
        let database = try await ScratchCluster.start()
        do {
            try await outageAndRecovery(database)
        } catch {
            await database.remove()
            throw error
        }
        await database.remove()
    }

    private func outageAndRecovery(_ database: ScratchCluster) async throws {
        // --pool-timeout 10: GET /changes waits for the sequencer twice that (20 s) before its 503, within the
        // clients' 30 s; the default of test servers (30 s) would make it wait 60 s. The pool connects first,
        // so that its own start on a loaded machine does not count against the 10 s.
        let server = try await ServerProcess.start(["--database-url", database.databaseURL, "--pool-timeout", "10"])
        try await waitUntil("the server's pool has connected", timeout: .seconds(60)) {
            try await Self.otherSessions(database.databaseURL).contains(where: Self.isPooled)
        }
        let category = try await server.request("POST", "/categories", json: #"{"title":"Food","amount":100}"#)
        #expect(category.status == 201, "\(category.text)")
        #expect(try await server.request("GET", "/ready").status == 200)

        try await database.stop()
        // Several rounds: the first finds the pool's connections broken, later ones arrive while the pool
        // is between reconnect attempts, or making one. Every request gets an answer within the client's
        // timeout (a hang fails the test with a receive timeout), and each answer is the documented 503.
        for round in 1...3 {
            let answers = try await withThrowingTaskGroup(of: (String, TestResponse).self) { group in
                for request in Self.databaseRequests {
                    group.addTask {
                        let response = try await server.request(
                            request.method, request.path, json: request.body, headers: request.headers, timeout: .seconds(30))
                        return ("\(request.method) \(request.path)", response)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (request, response) in answers {
                #expect(response.status == 503, "round \(round): \(request) answered \(response.status) \(response.text)")
                #expect(response.header("Retry-After") == "1", "round \(round): \(request)")
                #expect(response.header("Content-Type")?.hasPrefix("application/problem+json") == true, "round \(round): \(request)")
            }
            let ready = try await server.request("GET", "/ready", timeout: .seconds(30))
            #expect(ready.status == 503, "round \(round): /ready answered \(ready.status)")
            #expect(ready.header("Retry-After") != nil)
            let health = try await server.request("GET", "/health", timeout: .seconds(30))
            #expect(health.status == 200, "round \(round): /health answered \(health.status)")
            #expect(server.process.isRunning, "the server exited while the database was down:\n\(server.process.outputTail())")
            // Not a timing bound: a pause lets the next round meet the pool in another reconnect state.
            try await Task.sleep(for: .milliseconds(300))
        }

        try await database.startAgain()
        // No restart of the server: its pool reconnects on its own (backing off at most 2 s between tries).
        var write: TestResponse?
        try await waitUntil("a write succeeds again after PostgreSQL restarted", timeout: .seconds(30)) {
            write = try await server.request("POST", "/transactions", json: #"{"categoryId":1,"title":"after","amount":2}"#)
            if write?.status == 201 { return true }
            // Between tries, not a bound: the deadline is waitUntil's; this only spaces out the requests.
            try await Task.sleep(for: .milliseconds(100))
            return false
        }
        #expect(write?.object["title"] as? String == "after")
        #expect(try await server.request("GET", "/ready").status == 200)
        #expect(try await server.request("GET", "/changes?since=0").status == 200)
        #expect(server.process.isRunning)
        // What a client could not write during the outage is not there; what it wrote before and after is.
        let titles = try await server.request("GET", "/transactions").array.compactMap { $0["title"] as? String }
        #expect(titles == ["after"])
        #expect(server.log.contains("cannot connect to the database"), "the outage is logged")
        // A pool worker logs its recovery when it next connects, which it does for its next job: the requests
        // above may all have been served by loop connections and workers that never failed (seen once in CI).
        // /ready runs on the pool; a few at once reach the workers that failed.
        try await waitUntil("the recovery is logged", timeout: .seconds(30)) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 { group.addTask { _ = try await server.request("GET", "/ready") } }
                try await group.waitForAll()
            }
            return server.log.contains("database connection restored")
        }
    }

    /// A database that hangs instead of going away (here: a table lock the test holds) must not hang the
    /// API: with the pool's one connection stuck, the next request waits at most the checkout timeout
    /// (`--pool-timeout`, 10 s here, below the stuck statement's 30 s `statement_timeout`, which would
    /// otherwise free the connection first) and answers 503. `ConnectionPoolTests` proves the pool's
    /// deadline; this proves the server's answer. Every statement goes through the pool here
    /// (`--loop-connections 0`); `LoopConnectionsTests` proves the same deadline for the event loops' own
    /// connections.
    @Test func aHungDatabaseMeans503AfterTheCheckoutDeadline() async throws {
        let url = try await TestDatabase.fresh()
        let server = try await ServerProcess.start(
            ["--database-url", url, "--pool-size", "1", "--loop-connections", "0", "--pool-timeout", "10"])
        // The pool's one connection is up before the first request, so that its own start, however slow on a
        // loaded machine, does not count against the 10 s.
        try await waitUntil("the server's pool has connected", timeout: .seconds(60)) {
            try await Self.otherSessions(url).contains(where: Self.isPooled)
        }
        #expect(try await server.request("POST", "/categories", json: #"{"title":"Food","amount":100}"#).status == 201)

        let lock = TableLock(url: url, table: "categories")
        try await lock.acquire()
        do {
            // This request takes the only connection and waits for the lock, as long as the test holds it.
            let stuck = Task { try await server.request("GET", "/categories", timeout: .seconds(60)) }
            try await waitUntil("the server's query waits for the lock") {
                try await lock.othersWaiting() == 1
            }
            let started = ContinuousClock.now
            let starved = try await server.request("GET", "/transactions", timeout: .seconds(60))
            let waited = ContinuousClock.now - started
            #expect(starved.status == 503, "\(starved.text)")
            #expect(starved.header("Retry-After") == "1")
            print("a request with no free connection answered \(starved.status) after \(waited)")
            try await lock.release()
            let unstuck = try await stuck.value
            #expect(unstuck.status == 200, "the stuck request completes once the lock is released")
        } catch {
            try? await lock.release()
            throw error
        }
        #expect(try await server.request("GET", "/transactions").status == 200)
    }

    /// Every pooled connection of the real server runs under a statement timeout (PoolConfiguration's 30 s),
    /// so no query can hold a connection longer. Seen from PostgreSQL: right after start-up the last thing
    /// each pool session ran is its connection setup, which sets `statement_timeout`. (Waiting 30 s for a
    /// cancellation would prove no more; `ConnectionPoolTests` shows the setting cancels a slow statement.)
    @Test func everyPooledConnectionRunsUnderAStatementTimeout() async throws {
        let url = try await TestDatabase.fresh()
        let server = try await ServerProcess.start(["--database-url", url, "--pool-size", "3"])
        var sessions: [String] = []
        try await waitUntil("the server's pool has connected") {
            sessions = try await Self.otherSessions(url)
            return sessions.filter(Self.isPooled).count >= 3
        }
        #expect(sessions.filter(Self.isPooled).count == 3, "\(sessions)")
        // The schedule poster's first run may have taken one of them since (it runs at start, on a pooled
        // connection): that session ran the setup before it, as every pooled one does.
        let pooled = sessions.filter { $0.contains("statement_timeout") }
        #expect(pooled.count >= 2, "\(sessions)")
        #expect(pooled.allSatisfy { $0.contains("SET statement_timeout TO 30000") }, "\(pooled)")
        // And a session that carries it really has it: the same setup on a pool of our own.
        let pool = ConnectionPool(configuration: PoolConfiguration(url: url, size: 1), logger: .init(label: "ops"))
        #expect(try await pool.withConnection { try $0.query("SELECT current_setting('statement_timeout')")[0].decode(String.self, at: 0) } == "30s")
        await pool.shutdown()
        #expect(server.process.isRunning)
    }

    /// Whether a session's last query shows it is one of the server's pooled connections: its setup, which sets
    /// `statement_timeout`, or the schedule poster's statement, which runs on one at start (`SchedulePoster`).
    private static func isPooled(_ lastQuery: String) -> Bool {
        lastQuery.contains("statement_timeout") || lastQuery.contains("post_due_schedules")
    }

    /// The last query of every other session on `url`'s database.
    private static func otherSessions(_ url: String) async throws -> [String] {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            let rows = try connection.query(
                "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
            return try (0..<rows.count).map { try rows[$0].decode(String.self, at: 0) }
        }
    }
}

/// An ACCESS EXCLUSIVE lock on a table, held by a transaction on a thread of the test's own (a libpq
/// connection stays on the thread that opened it).
private final class TableLock: Sendable {
    private let url: String
    private let table: String
    private let acquired = DispatchSemaphore(value: 0)
    private let releaseRequested = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let failure = Mutex<String?>(nil)
    private let isReleased = Mutex(false)

    init(url: String, table: String) {
        self.url = url
        self.table = table
    }

    /// Starts the holding thread and returns once the lock is held.
    func acquire() async throws {
        Thread { [self] in
            do {
                let connection = try Connection.connect(to: url)
                try connection.execute(script: "BEGIN; LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE")
                acquired.signal()
                releaseRequested.wait()
                try connection.execute(script: "ROLLBACK")
                connection.close()
            } catch {
                failure.withLock { $0 = "\(error)" }
                acquired.signal()
            }
            released.signal()
        }.start()
        try await runOffCooperativePool { [self] in
            acquired.wait()
            if let failure = failure.withLock({ $0 }) { throw WaitTimedOut(description: "could not lock \(table): \(failure)") }
        }
    }

    /// Ends the holding transaction and returns once it has; a second call does nothing.
    func release() async throws {
        let wasReleased = isReleased.withLock { released in
            defer { released = true }
            return released
        }
        guard !wasReleased else { return }
        releaseRequested.signal()
        try await runOffCooperativePool { [released] in
            guard released.wait(timeout: .now() + 30) == .success else { throw WaitTimedOut(description: "the lock was not released") }
        }
    }

    /// Sessions waiting for a lock on the table.
    func othersWaiting() async throws -> Int {
        try await runOffCooperativePool { [url, table] in
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            return try connection.query(
                // pg_locks covers the whole cluster, and every test database is a copy of one template, so the
                // same table has the same oid in each: only this database's locks count.
                """
                SELECT count(*)::int FROM pg_locks
                WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND relation = \(table)::regclass AND NOT granted
                """
            )[0].decode(Int.self, at: 0)
        }
    }
}
