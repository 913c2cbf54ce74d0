import BudgetAPI
import BudgetSync
import Foundation
import Testing
import APITestSupport
import TestSupport

/// Clients that wrote offline push, pull, and end with exactly the server's records (docs/budgetsync.md).
@Suite struct ConvergenceTests {
    static let posts = #"{"posts":[{"id":1,"title":"Offline first","views":120},{"id":2,"title":"Drafts","views":0}]}"#

    @Test func twoClientsThatEditedOfflineConvergeToTheServer() async throws {
        try await TestApp.with { server in
            try await server.seed(Self.posts)
            let (alice, aliceStore) = try server.makeClient(device: "alice", collections: ["posts"])
            let (bob, bobStore) = try server.makeClient(device: "bob", collections: ["posts"])
            try await alice.pull()
            try await bob.pull()
            #expect(try await aliceStore.objects(in: "posts").count == 2)

            // Offline: each queues writes, some to the same record (last write wins without ifMatch).
            try await alice.enqueue(.post, "/posts", body: #"{"title":"From Alice","views":1}"#)
            try await alice.enqueue(.patch, "/posts/1", body: #"{"views":121}"#)
            try await bob.enqueue(.put, "/posts/50", body: #"{"id":50,"title":"From Bob","views":2}"#)
            try await bob.enqueue(.patch, "/posts/1", body: #"{"title":"Offline first, edited"}"#)
            try await bob.enqueue(.delete, "/posts/2")

            #expect(try await alice.push().count == 2)
            #expect(try await bob.push().count == 3)
            try await alice.pull()
            try await bob.pull()

            let expected = try await server.objects(in: "posts")
            #expect(expected.count == 3)
            #expect(expected["1"]?["views"] as? Int == 121 && expected["1"]?["title"] as? String == "Offline first, edited")
            #expect(try await aliceStore.objects(in: "posts") == expected)
            #expect(try await bobStore.objects(in: "posts") == expected)
            #expect(await aliceStore.pendingOperations().isEmpty)
            #expect(await bobStore.pendingOperations().isEmpty)
        }
    }

    @Test func recordsKeepTheServersExactBytes() async throws {
        try await TestApp.with { server in
            try await server.seed(#"{"measures":[{"id":"m-1","value":12345678901234567890.120}]}"#)
            let (client, store) = try server.makeClient(device: "exact", collections: ["measures"])
            try await client.pull()
            let local = try #require(await store.records(in: "measures")["m-1"])
            let remote = try await server.request("GET", "/measures/m-1")
            #expect(local.json == Data(remote.body))
            #expect(String(decoding: local.json, as: UTF8.self).contains("12345678901234567890.120"))
        }
    }

    @Test func aLivePullSeesANewChangeAndEndsAtOnceWhenCancelled() async throws {
        try await TestApp.with { server in
            let (client, store) = try server.makeClient(device: "live", collections: ["notes"]) { $0.longPollSeconds = 60 }
            try await server.seed(#"{"notes":[{"id":0,"text":"first"}]}"#)
            let live = Task { try await client.pull(live: true) }
            let created = try await server.request("POST", "/notes", json: #"{"id":1,"text":"hello"}"#)
            #expect(created.status == 201)
            try await waitUntil("the live pull applied the new note") { await store.records(in: "notes")["1"] != nil }
            // Now parked in a 60-second long poll (or about to be); cancelling must not wait for it.
            let started = ContinuousClock.now
            live.cancel()
            let outcome = await live.result
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(throws: CancellationError.self) { try outcome.get() }
        }
    }
}

/// A client keeps the collections it names: the feed's other changes are skipped, as a resync would skip them.
@Suite struct KeptCollectionsTests {
    @Test func aPullAppliesOnlyTheConfiguredCollections() async throws {
        try await TestApp.with { server in
            try await server.seed(#"{"posts":[{"id":1,"title":"kept"}],"comments":[{"id":1,"postId":1,"body":"skipped"}]}"#)
            let (client, store) = try server.makeClient(device: "narrow", collections: ["posts"])
            let summary = try await client.pull()
            #expect(summary.changes == 1 && summary.resyncedRecords == nil)
            #expect(try await store.objects(in: "posts") == server.objects(in: "posts"))
            #expect(await store.records(in: "comments").isEmpty)
            // The cursor still moved past the skipped change: the next pull does not bring it again.
            #expect(try await client.pull().changes == 0)
        }
    }
}

/// The typed views of the budget's own collections decode what the feed delivered, money exactly.
@Suite struct TypedRecordTests {
    @Test func categoriesAndTransactionsDecodeWithExactMoney() async throws {
        try await TestApp.with { server in
            _ = try await server.request("POST", "/categories", json: #"{"title":"Food","amount":"400.10"}"#)
            _ = try await server.request("POST", "/categories/1/transactions", json: #"{"title":"Milk","amount":"3.49","date":"2026-11-20"}"#)
            let (client, store) = try server.makeClient(device: "typed", collections: ["categories", "transactions"])
            try await client.pull()
            let milk = try #require(await store.records(in: "transactions")["1"]).decode(BudgetTransaction.self)
            #expect(milk.amount == Money("3.49") && milk.date == "2026-11-20" && milk.categoryId == 1 && milk.note == nil)
            // The feed does not list the category again after the transaction (docs/sync.md): fetch it.
            let food = try #require(try await client.fetch(collection: "categories", id: "1")).record.decode(BudgetCategory.self)
            #expect(food.amount == Money("400.10") && food.spent == Money("3.49"))
            #expect(food.remaining == Money("396.61"))
        }
    }
}
