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
        // Suspended first, so that the NOTIFY wakes a waiter rather than ending a wait before it began.
        try await waitUntil("the waiter waits") { notifications.waiterCount == 1 }
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
        // The generation moves on before the wait begins, so the wait returns as soon as it sees that.
        try await waitUntil("the listener has read the NOTIFY") { notifications.generation > seen }
        let start = ContinuousClock.now
        #expect(await notifications.wait(after: seen, timeout: .seconds(60)) > seen)
        // Far below the wait's 60 s: it did not suspend at all.
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func otherChannelsAndTimeoutsLeaveTheGenerationAlone() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: Self.logger)
        defer { notifications.stop() }
        let seen = try await Self.listening(notifications)
        try await Self.run("NOTIFY other_things", on: url)
        // The timeout is the behaviour under test, so this wait lasts a fixed time; only its lower bound is
        // asserted, which a loaded machine cannot break (it may only resume the waiter later).
        let start = ContinuousClock.now
        #expect(await notifications.wait(after: seen, timeout: .milliseconds(500)) == seen)
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(450))
        #expect(notifications.waiterCount == 0)
        // Notifications from one session arrive in order: once one on `things` has counted exactly once, the
        // one on `other_things` before it has been read too, and did not count.
        try await Self.run("NOTIFY things", on: url)
        #expect(await notifications.wait(after: seen, timeout: .seconds(60)) == seen + 1)
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
        async let woken = notifications.wait(after: seen, timeout: .seconds(60))
        // Suspended first: a wait that began after the reconnect would end at once, with a later generation.
        try await waitUntil("the waiter waits") { notifications.waiterCount == 1 }
        try await Self.run(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'
            """, on: url)
        // Losing the connection wakes waiters (what was sent meanwhile is lost); listening again bumps once more.
        #expect(await woken == seen + 1)
        var generation = notifications.generation
        try await waitUntil("the listener listens again after the reconnect", timeout: .seconds(30)) {
            generation = await notifications.wait(after: generation, timeout: .seconds(1))
            return generation >= seen + 2
        }
        async let next = notifications.wait(after: generation, timeout: .seconds(60))
        try await waitUntil("the waiter waits") { notifications.waiterCount == 1 }
        try await Self.run("NOTIFY things", on: url)
        #expect(await next > generation, "notifications arrive again after the reconnect")
    }

    /// Threads of this process, from /proc.
    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }
}

/// `Notifications` with topics: a payload wakes the waiters of the topics it names, and no others.
@Suite struct NotificationTopicTests {
    /// Reads `1:5,7:40` as topics 1 and 7; anything else wakes everyone.
    static func topics(_ payload: String) -> [Int64]? {
        let pairs = payload.split(separator: ",").map { $0.split(separator: ":") }
        guard pairs.allSatisfy({ $0.count == 2 }) else { return nil }
        let topics = pairs.compactMap { Int64($0[0]) }
        return topics.count == pairs.count ? topics : nil
    }

    @Test func aPayloadWakesItsTopicsWaitersOnly() async throws {
        let url = try await TestDatabase.empty()
        let notifications = Notifications(url: url, channel: "things", logger: NotificationTests.logger, topics: Self.topics)
        defer { notifications.stop() }
        _ = try await NotificationTests.listening(notifications)
        let seenOne = notifications.generation(of: 1), seenTwo = notifications.generation(of: 2)
        async let one = notifications.wait(after: seenOne, topic: 1, timeout: .seconds(60))
        async let two = notifications.wait(after: seenTwo, topic: 2, timeout: .seconds(60))
        try await waitUntil("both wait") { notifications.waiterCount == 2 }
        try await NotificationTests.run("NOTIFY things, '2:7'", on: url)
        #expect(await two > seenTwo)
        // Topic 1's waiter is still suspended: topic 2's notification did not resume it.
        #expect(notifications.waiterCount == 1)
        #expect(notifications.generation(of: 1) == seenOne)
        // A payload it cannot read wakes everyone.
        try await NotificationTests.run("NOTIFY things, '*'", on: url)
        #expect(await one > seenOne)
    }
}
