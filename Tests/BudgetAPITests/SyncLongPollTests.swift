import BudgetAPI
import Foundation
import Testing
import TestSupport

/// `wait` long-polls until a change commits, through any server process on the database (docs/sync.md).
@Suite struct SyncLongPollTests {
    @Test func aWriteThroughAnotherServerWakesALongPoll() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { first in
            try await TestApp.with(databaseURL: first.databaseURL, poolConfiguration: TestApp.smallPool) { second in
                // The wait is far longer than the test client's 10 s read timeout: only a notification can
                // answer this poll in time, however slow a loaded machine is.
                async let polled = first.request("GET", "/changes?since=0&wait=60")
                try await Task.sleep(for: .milliseconds(400))
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
            let start = ContinuousClock.now
            async let polled = app.request("GET", "/changes?collection=transactions&wait=2")
            try await Task.sleep(for: .milliseconds(300))
            _ = try await app.request("POST", "/categories", json: #"{"title":"Other","amount":1}"#)
            let response = try await polled
            // The category's change woke the poll, which found nothing for `transactions` and waited on. Its
            // lastSeq is 1 when the write committed within the wait, 0 when a loaded machine was slower.
            #expect(response.text == #"{"changes":[],"lastSeq":1,"hasMore":false}"#
                || response.text == #"{"changes":[],"lastSeq":0,"hasMore":false}"#)
            #expect(ContinuousClock.now - start >= .milliseconds(1900))
        }
    }

    @Test func manyLongPollsAreWokenByOneWrite() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let pollers = 40
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<pollers {
                    group.addTask {
                        try await app.request("GET", "/changes?since=0&wait=60").text.contains(#""title":"Many""#)
                    }
                }
                try await Task.sleep(for: .milliseconds(500))
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
        async let polled = app.request("GET", "/changes?since=1&wait=60")
        try await waitUntil("the long-poll waits") { app.service.longPollWaiters == 1 }
        // What a SIGTERM does (Serve.swift): answer the pollers, then drain with a grace period far below the wait.
        await app.stop()
        let response = try await polled
        #expect(response.status == 200)
        #expect(response.text == #"{"changes":[],"lastSeq":1,"hasMore":false}"#)
    }
}
