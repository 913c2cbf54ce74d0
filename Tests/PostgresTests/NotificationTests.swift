import Foundation
import Logging
import Postgres
import Testing
import TestSupport

/// `Notifications`: a LISTENing connection on its own thread that wakes async waiters.
@Suite struct NotificationTests {
    static let logger: Logger = {
        var logger = Logger(label: "notification-tests")
        logger.logLevel = .critical
        return logger
    }()

    /// Runs one SQL statement on a connection of its own, off the cooperative pool.
    static func run(_ sql: String, on url: String) async throws {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            try connection.execute(script: sql)
        }
    }

    /// Waits until the listener has LISTENed (its first generation bump), so later NOTIFYs reach it.
    static func listening(_ notifications: Notifications) async throws -> UInt64 {
        var seen = notifications.generation
        try await waitUntil("the listener is listening") {
            seen = await notifications.wait(after: 0, timeout: .seconds(1))
            return seen > 0
        }
        return seen
    }

    @Test func aNotifyWakesAWaiterFromAnotherConnection() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: Self.logger)
        defer { notifications.stop() }
        let seen = try await Self.listening(notifications)
        async let woken = notifications.wait(after: seen, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(200))
        try await Self.run("NOTIFY things, 'hello'", on: url)
        // A wait that timed out would answer `seen`: a newer generation is the notification's doing.
        #expect(await woken > seen)
    }

    @Test func aNotificationBeforeTheWaitIsNotLost() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: Self.logger)
        defer { notifications.stop() }
        let seen = try await Self.listening(notifications)
        try await Self.run("NOTIFY things", on: url)
        // The generation moved on before the wait began, so the wait returns as soon as it sees that.
        var generation = seen
        let start = ContinuousClock.now
        while generation == seen && ContinuousClock.now - start < .seconds(4) {
            try await Task.sleep(for: .milliseconds(20))
            generation = notifications.generation
        }
        #expect(await notifications.wait(after: seen, timeout: .seconds(60)) > seen)
    }

    @Test func otherChannelsAndTimeoutsLeaveTheGenerationAlone() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: Self.logger)
        defer { notifications.stop() }
        let seen = try await Self.listening(notifications)
        try await Self.run("NOTIFY other_things", on: url)
        let start = ContinuousClock.now
        #expect(await notifications.wait(after: seen, timeout: .milliseconds(500)) == seen)
        let elapsed = ContinuousClock.now - start
        // Only a lower bound: the wait must have lasted; a loaded machine may take longer to resume it.
        #expect(elapsed >= .milliseconds(450))
        #expect(notifications.waiterCount == 0)
    }

    @Test func thousandsOfWaitersAreWokenByOneNotifyWithoutAThreadEach() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: Self.logger)
        defer { notifications.stop() }
        let seen = try await Self.listening(notifications)
        let threadsBefore = Self.threadCount()
        // Thousands, so that a thread per waiter would stand out against the threads the other suites start
        // meanwhile (their blocking test clients take one each; several hundred were seen at once).
        let waiters = 3000
        try await withThrowingTaskGroup(of: UInt64.self) { group in
            for _ in 0..<waiters {
                // Long enough that none gives up before the last one has started on a loaded machine.
                group.addTask { await notifications.wait(after: seen, timeout: .seconds(60)) }
            }
            try await waitUntil("\(waiters) waiters wait") { notifications.waiterCount == waiters }
            #expect(Self.threadCount() < threadsBefore + waiters, "waiting costs no thread")
            try await Self.run("NOTIFY things", on: url)
            var woken = 0
            for try await generation in group where generation > seen { woken += 1 }
            #expect(woken == waiters)
        }
        #expect(notifications.waiterCount == 0)
    }

    @Test func aCancelledWaiterLeavesAtOnce() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: Self.logger)
        defer { notifications.stop() }
        let seen = try await Self.listening(notifications)
        let start = ContinuousClock.now
        let task = Task { await notifications.wait(after: seen, timeout: .seconds(120)) }
        try await waitUntil("the waiter waits") { notifications.waiterCount == 1 }
        task.cancel()
        #expect(await task.value == seen)
        // Far below the wait's 120 s: the cancellation ended it, not the timeout.
        #expect(ContinuousClock.now - start < .seconds(60))
        #expect(notifications.waiterCount == 0)
    }

    @Test func theListenerReconnectsAfterItsBackendIsTerminated() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: Self.logger)
        defer { notifications.stop() }
        let seen = try await Self.listening(notifications)
        async let woken = notifications.wait(after: seen, timeout: .seconds(8))
        try await Task.sleep(for: .milliseconds(100))
        try await Self.run("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
            """, on: url)
        // Losing the connection wakes waiters (what was sent meanwhile is lost); listening again bumps once more.
        #expect(await woken == seen + 1)
        var generation = notifications.generation
        let deadline = ContinuousClock.now + .seconds(5)
        while generation < seen + 2 && ContinuousClock.now < deadline {
            generation = await notifications.wait(after: generation, timeout: .milliseconds(500))
        }
        #expect(generation >= seen + 2, "listening again after the reconnect")
        async let next = notifications.wait(after: generation, timeout: .seconds(5))
        try await Task.sleep(for: .milliseconds(100))
        try await Self.run("NOTIFY things", on: url)
        #expect(await next > generation, "notifications arrive again after the reconnect")
    }

    /// Threads of this process, from /proc.
    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }
}
