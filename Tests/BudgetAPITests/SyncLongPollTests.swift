@testable import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

/// `wait` long-polls until a change commits, through any server process on the database (docs/sync.md).
@Suite struct SyncLongPollTests {
    /// The read timeout of a long-poll's client: a hang detector far above what a loaded machine takes to
    /// answer a woken poll, and below the polls' `wait=60`, so that a poll no change woke fails the test.
    static let pollTimeout = Duration.seconds(50)
    /// How long a poll may take to wait: `GET /changes` first waits for the sequencer to catch up, up to twice
    /// the pool's checkout timeout (30 s in `TestApp`s), which on a loaded machine is more than `waitUntil`'s
    /// default 20 s.
    static let registering = Duration.seconds(90)

    @Test func aWriteThroughAnotherServerWakesALongPoll() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { first in
            try await TestApp.with(databaseURL: first.databaseURL, poolConfiguration: TestApp.smallPool) { second in
                // The wait outlasts the client's read timeout: only a notification can answer this poll in time.
                async let polled = first.request("GET", "/changes?since=0&wait=60", timeout: Self.pollTimeout)
                try await waitUntil("the long-poll waits", timeout: Self.registering) { first.service.longPollWaiters == 1 }
                let created = try await second.request("POST", "/categories", json: #"{"title":"Woken","amount":1}"#)
                #expect(created.status == 201)
                let response = try await polled
                #expect(response.status == 200)
                #expect(response.text.contains(#""collection":"categories","id":1,"op":"upsert""#), "\(response.text)")
            }
        }
    }

    @Test func aLongPollWithNothingNewEndsWithItsWait() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Old","amount":1}"#)
            let start = ContinuousClock.now
            let response = try await app.request("GET", "/changes?since=1&wait=1")
            let elapsed = ContinuousClock.now - start
            #expect(response.text == #"{"changes":[],"lastSeq":1,"hasMore":false}"#)
            // Only a lower bound: the poll must have waited; how much longer a loaded machine took is not the point.
            #expect(elapsed >= .milliseconds(900))
        }
    }

    @Test func aChangeInAnotherCollectionDoesNotEndAFilteredWait() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let notifications = app.service.notifications
            // Listening first: the listener's first LISTEN wakes every waiter once, which is not the change.
            try await waitUntil("the listener is listening") {
                await notifications.wait(after: 0, timeout: .seconds(1)) > 0
            }
            async let polled = app.request("GET", "/changes?collection=transactions&wait=60", timeout: Self.pollTimeout)
            try await waitUntil("the filtered long-poll waits", timeout: Self.registering) { app.service.longPollWaiters == 1 }
            let before = notifications.generation
            let category = try await app.request("POST", "/categories", json: #"{"title":"Other","amount":1}"#)
            #expect(category.status == 201)
            // The category's change wakes every waiter (which removes it); the filtered poll finds nothing for
            // `transactions` and waits again. A poll that the wake ended would never be back among the waiters.
            try await waitUntil("the poll, woken by the category's change, waits again", timeout: Self.registering) {
                notifications.generation > before && app.service.longPollWaiters == 1
            }
            // Only a transaction ends the wait, and the answer holds only it.
            let transaction = try await app.request(
                "POST", "/transactions", json: #"{"categoryId":1,"title":"Mine","amount":2}"#)
            #expect(transaction.status == 201, "\(transaction.text)")
            let response = try await polled
            #expect(response.status == 200)
            let changes = response.object["changes"] as? [[String: Any]] ?? []
            #expect(changes.map { $0["collection"] as? String } == ["transactions"], "\(response.text)")
            #expect((changes.first?["seq"] as? NSNumber)?.int64Value == 2, "\(response.text)")
            #expect((response.object["lastSeq"] as? NSNumber)?.int64Value == 2, "\(response.text)")
        }
    }

    @Test func manyLongPollsAreWokenByOneWrite() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let pollers = 40
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<pollers {
                    group.addTask {
                        try await app.request("GET", "/changes?since=0&wait=60", timeout: Self.pollTimeout)
                            .text.contains(#""title":"Many""#)
                    }
                }
                try await waitUntil("every long-poll waits", timeout: Self.registering) { app.service.longPollWaiters == pollers }
                _ = try await app.request("POST", "/categories", json: #"{"title":"Many","amount":1}"#)
                var woken = 0
                for try await sawChange in group where sawChange { woken += 1 }
                #expect(woken == pollers)
            }
        }
    }

    @Test func aClientThatHangsUpFreesItsWaiter() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            // The client is not Sendable, so one thread opens it, waits for the poll to be registered, and hangs up.
            try await runOffCooperativePool { [port = app.port, service = app.service] in
                let client = try TestClient(port: port)
                defer { client.close() }
                try client.send("GET /changes?since=0&wait=60 HTTP/1.1\r\nHost: x\r\n\r\n")
                let deadline = ContinuousClock.now + .seconds(20)
                while service.longPollWaiters != 1 {
                    guard ContinuousClock.now < deadline else { throw WaitTimedOut(description: "the long-poll never waited") }
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }
            // Without the hang-up noticed, the waiter would stay for the whole minute.
            try await waitUntil("the waiter is gone") { app.service.longPollWaiters == 0 }
        }
    }

    @Test func shuttingDownAnswersWaitingLongPolls() async throws {
        let app = try await TestApp(poolConfiguration: TestApp.smallPool)
        _ = try await app.request("POST", "/categories", json: #"{"title":"Before","amount":1}"#)
        async let polled = app.request("GET", "/changes?since=1&wait=60", timeout: Self.pollTimeout)
        try await waitUntil("the long-poll waits", timeout: Self.registering) { app.service.longPollWaiters == 1 }
        // What a SIGTERM does (Serve.swift): answer the pollers, then drain with a grace period far below the wait.
        await app.stop()
        let response = try await polled
        #expect(response.status == 200)
        #expect(response.text == #"{"changes":[],"lastSeq":1,"hasMore":false}"#)
    }
}
