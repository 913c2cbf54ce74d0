import Foundation
import Logging
import Postgres
import TestSupport
import Testing

@Suite("ConnectionPool against a real server")
struct ConnectionPoolTests {
    private let logger = Logger(label: "ConnectionPoolTests")

    private func makePool(
        size: Int, checkoutTimeout: Duration = .seconds(30), url: String? = nil,
        statementTimeout: Duration? = .seconds(30)
    ) async throws -> ConnectionPool {
        let resolvedURL: String
        if let url { resolvedURL = url } else { resolvedURL = try await TestDatabase.empty() }
        let configuration = PoolConfiguration(
            url: resolvedURL, size: size,
            checkoutTimeout: checkoutTimeout, statementTimeout: statementTimeout)
        return ConnectionPool(configuration: configuration, logger: logger)
    }

    private func shutDown(_ pool: ConnectionPool) async {
        await pool.shutdown()
    }

    @Test func concurrentJobsNeverExceedThePoolSize() async throws {
        let pool = try await makePool(size: 3)
        let gauge = ConcurrencyGauge()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for value in 0..<24 {
                group.addTask {
                    try await pool.withConnection { connection in
                        gauge.enter()
                        defer { gauge.leave() }
                        return try connection.query("SELECT \(value)::int, pg_sleep(0.02)")[0].decode(Int.self, at: 0)
                    }
                }
            }
            var sum = 0
            for try await value in group { sum += value }
            #expect(sum == (0..<24).reduce(0, +))
        }
        #expect(gauge.maximum <= 3)
        await shutDown(pool)
    }

    @Test func aPoolOfThreeRunsThreeJobsAtOnce() async throws {
        let pool = try await makePool(size: 3)
        // A loaded machine can fail or delay a worker's first connect (jobs then fail fast during its backoff):
        // wait until three jobs at once find their connections, which is not what this test is about.
        try await waitUntil("all three workers have connected") {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<3 { group.addTask { (try? await pool.withConnection { _ in true }) ?? false } }
                return await group.reduce(true) { $0 && $1 }
            }
        }
        // Each job waits inside its connection until all three are inside: only three workers at once can pass.
        let barrier = Barrier(parties: 3)
        let passed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<3 {
                group.addTask { try await pool.withConnection { _ in barrier.arriveAndWait(timeout: 20) } }
            }
            return try await group.reduce(into: 0) { count, passed in count += passed ? 1 : 0 }
        }
        #expect(passed == 3)
        await shutDown(pool)
    }

    @Test func checkoutTimesOutWhenEveryConnectionIsBusy() async throws {
        let pool = try await makePool(size: 1, checkoutTimeout: .seconds(2))
        // A loaded machine may take longer than a checkout timeout to connect the worker; wait until it has.
        try await waitUntil("the worker has connected") { (try? await pool.withConnection { _ in true }) ?? false }
        // The only connection stays busy until the test lets go, so the sweeper must fail the next job.
        let (started, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let busy = Task {
            try await pool.withConnection { _ in
                started.signal()
                release.wait()
            }
        }
        // The job's own signal, not `inUse`: the warm-up job still counts as in use while its worker tidies up.
        try await waitUntil("the busy job holds the connection") { started.wait(timeout: .now()) == .success }
        await #expect { try await pool.withConnection { _ in 1 } } throws: { error in
            (error as? PostgresError)?.kind == .poolTimeout
        }
        #expect(pool.statistics.waiting == 0)
        release.signal()
        try await busy.value
        await shutDown(pool)
    }

    @Test func terminatedBackendIsReplacedAndTheNextJobSucceeds() async throws {
        let url = try await TestDatabase.empty()
        let pool = try await makePool(size: 1, url: url)
        let firstPID = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0) }
        let admin = try Connection.connect(to: url)
        // The second argument waits until the backend is really gone.
        #expect(try admin.query("SELECT pg_terminate_backend(\(firstPID), 5000)")[0].decode(Bool.self, at: 0))
        let secondPID = try await pool.withConnection { try $0.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0) }
        #expect(secondPID != firstPID)
        await shutDown(pool)
    }

    @Test func shutdownFinishesRunningJobsAndFailsWaitingOnes() async throws {
        // A long checkout timeout: the queued jobs must still be waiting when shutdown comes, however slow.
        let pool = try await makePool(size: 1, checkoutTimeout: .seconds(60))
        // The running job holds its connection until the test lets go, so the three others must queue.
        let (started, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let running = Task {
            try await pool.withConnection { connection in
                started.signal()
                release.wait()
                return try connection.query("SELECT 1")[0].decode(Int.self, at: 0)
            }
        }
        try await waitUntil("the running job holds the connection") { started.wait(timeout: .now()) == .success }
        let waiting = (0..<3).map { _ in Task { try await pool.withConnection { _ in 2 } } }
        try await waitUntil("three jobs queue") { pool.statistics.waiting == 3 }
        let shutdown = Task { await shutDown(pool) }
        for task in waiting {
            await #expect { try await task.value } throws: { ($0 as? PostgresError)?.kind == .poolClosed }
        }
        release.signal()
        await shutdown.value
        #expect(try await running.value == 1)
        await #expect { try await pool.withConnection { _ in 3 } } throws: { ($0 as? PostgresError)?.kind == .poolClosed }
    }

    @Test func unreachableServerFailsFastWithAConnectionError() async throws {
        let pool = try await makePool(
            size: 2, checkoutTimeout: .seconds(60),
            url: "postgresql:///postgres?host=/nonexistent-dir&user=postgres")
        let started = ContinuousClock.now
        for _ in 0..<3 {
            await #expect { try await pool.withConnection { _ in 1 } } throws: { error in
                (error as? PostgresError)?.kind == .connectionFailed && (error as? PostgresError)?.isConnectionProblem == true
            }
        }
        // Far below the checkout timeout: the jobs were failed, not left waiting. (The bound is loose
        // because other tests may keep the cooperative threads busy meanwhile.)
        #expect(ContinuousClock.now - started < .seconds(20))
        await shutDown(pool)
    }

    @Test func statementTimeoutCancelsSlowStatements() async throws {
        let pool = try await makePool(size: 1, statementTimeout: .milliseconds(100))
        await #expect { try await pool.withConnection { try $0.execute("SELECT pg_sleep(2)") } } throws: { error in
            (error as? PostgresError)?.sqlState == .queryCanceled
        }
        #expect(try await pool.withConnection { try $0.query("SELECT 5")[0].decode(Int.self, at: 0) } == 5)
        await shutDown(pool)
    }

    @Test func aTransactionOnAPooledConnectionRollsBackOnError() async throws {
        let pool = try await makePool(size: 2)
        try await pool.withConnection { try $0.execute("CREATE TABLE t (x int)") }
        await #expect(throws: PostgresError.self) {
            try await pool.withConnection { connection in
                try connection.transaction { connection in
                    try connection.execute("INSERT INTO t VALUES (\(1))")
                    try connection.execute("SELECT 1/0")
                }
            }
        }
        #expect(try await pool.withConnection { try $0.query("SELECT count(*) FROM t")[0].decode(Int.self, at: 0) } == 0)
        await shutDown(pool)
    }
}

/// Counts how many jobs run at once.
// @unchecked Sendable: `current` and `maximum` are guarded by `lock`.
private final class ConcurrencyGauge: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private var peak = 0

    var maximum: Int { lock.withLock { peak } }

    func enter() {
        lock.withLock {
            current += 1
            peak = max(peak, current)
        }
    }

    func leave() {
        lock.withLock { current -= 1 }
    }
}

/// Lets a number of threads wait until all of them have arrived, or a timeout passes.
// @unchecked Sendable: `arrived` is guarded by `condition`.
private final class Barrier: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrived = 0
    private let parties: Int

    init(parties: Int) { self.parties = parties }

    /// True when every party arrived before the timeout.
    func arriveAndWait(timeout seconds: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while arrived < parties, condition.wait(until: deadline) {}
        return arrived >= parties
    }
}
