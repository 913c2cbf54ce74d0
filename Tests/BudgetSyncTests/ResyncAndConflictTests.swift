import BudgetAPI
import BudgetSync
import Foundation
import Testing
import APITestSupport
import TestSupport

/// A cursor the feed no longer covers (410) and writes that lost a race (412) (docs/sync.md).
@Suite struct ResyncAndConflictTests {
    @Test func aCursorOlderThanTheTombstoneWindowResyncsFromTheLists() async throws {
        var options = BudgetApp.Options()
        options.tombstoneRetention = .zero
        try await TestApp.with(options: options) { server in
            try await server.request("POST", "/categories", json: #"{"title":"Food","amount":"400.00"}"#)
            try await server.request("POST", "/categories", json: #"{"title":"Rent","amount":"800.00"}"#)
            try await server.request("POST", "/categories/1/transactions", json: #"{"title":"Milk","amount":"3.49","date":"2026-11-20"}"#)
            let (client, store) = try server.makeClient(device: "late", collections: ["categories", "transactions"])
            try await client.pull()
            #expect(try await store.objects(in: "categories").count == 2)

            // While the client is away a record is deleted and its tombstone purged at once.
            try await server.request("DELETE", "/categories/2")
            try await server.request("POST", "/categories", json: #"{"title":"Fun","amount":"50.00"}"#)
            let summary = try await client.pull()
            #expect(summary.resyncedRecords == 3, "two categories and one transaction reloaded: \(summary)")
            #expect(await client.firstEvent { if case .resynced = $0 { true } else { false } } != nil, "the pull met 410 and resynced")
            #expect(try await store.objects(in: "categories") == server.objects(in: "categories"))
            #expect(try await store.objects(in: "transactions") == server.objects(in: "transactions"))
            #expect(try await store.objects(in: "categories")["2"] == nil)
        }
    }

    /// Category 1 changed on the server after the client read it; the client's edit carries the old ETag.
    private func conflict(
        _ policy: ConflictPolicy, _ check: (TestApp, FileSyncStore) async throws -> Void
    ) async throws {
        try await TestApp.with { server in
            try await server.request("POST", "/categories", json: #"{"title":"Food","amount":"400.00"}"#)
            let (client, store) = try server.makeClient(device: "editor", collections: ["categories"]) { $0.conflictPolicy = policy }
            try await client.pull()
            // The version the client pulled, with the tag the feed carried for it.
            let pulled = try #require(await store.records(in: "categories")["1"])
            #expect(pulled.etag != nil && pulled.version == 1)
            try await server.request("PATCH", "/categories/1", json: #"{"title":"Groceries"}"#)
            try await client.enqueue(.patch, editing: pulled, body: #"{"amount":"450.00"}"#)
            try await client.push()
            #expect(await store.pendingOperations().isEmpty)
            try await check(server, store)
        }
    }

    @Test func anEditOfThePulledVersionAppliesWithoutConflict() async throws {
        try await TestApp.with { server in
            _ = try await server.request("POST", "/categories", json: #"{"title":"Food","amount":"400.00"}"#)
            let (client, store) = try server.makeClient(device: "editor", collections: ["categories"])
            try await client.pull()
            let pulled = try #require(await store.records(in: "categories")["1"])
            #expect(pulled.etag == (try await server.request("GET", "/categories/1").header("ETag")))
            try await client.enqueue(.patch, pulled.path, body: #"{"amount":"450.00"}"#, ifMatch: pulled.etag)
            let acknowledged = try await client.push()
            #expect(acknowledged.map(\.status) == [200])
            #expect(acknowledged.first?.record?.etag == (try await server.request("GET", "/categories/1").header("ETag")))
            #expect((try await server.objects(in: "categories"))["1"]?["amount"] as? NSNumber == 450)
        }
    }

    /// A transaction added elsewhere moves the category's `spent`, hence its ETag, but not its version:
    /// the edit of its amount is no conflict and lands, re-sent under the new tag.
    @Test func aCategoryWhoseSpentAloneMovedIsNoConflict() async throws {
        try await TestApp.with { server in
            _ = try await server.request("POST", "/categories", json: #"{"title":"Food","amount":"400.00"}"#)
            let (client, store) = try server.makeClient(device: "budget", collections: ["categories", "transactions"])
            try await client.pull()
            let pulled = try #require(await store.records(in: "categories")["1"])
            try await client.enqueue(.patch, editing: pulled, body: #"{"amount":"450.00"}"#)
            _ = try await server.request("POST", "/categories/1/transactions", json: #"{"title":"Milk","amount":"3.49"}"#)
            #expect(try await server.request("GET", "/categories/1").header("ETag") != pulled.etag)

            #expect(try await client.push().map(\.status) == [200])
            let first = await client.firstEvent { if case .conflict = $0 { true } else if case .pushed = $0 { true } else { false } }
            #expect(first == .pushed(operations: 1, replayed: 0), "no conflict was reported")
            let remote = try await server.objects(in: "categories")
            #expect(remote["1"]?["amount"] as? NSNumber == 450 && remote["1"]?["spent"] as? NSNumber == 3.49)
        }
    }

    @Test func serverWinsDropsTheLocalEditAndTakesTheServersRecord() async throws {
        try await conflict(.serverWins) { server, store in
            let remote = try await server.objects(in: "categories")
            #expect(remote["1"]?["title"] as? String == "Groceries")
            #expect((remote["1"]?["amount"] as? NSNumber)?.doubleValue == 400)
            #expect(try await store.objects(in: "categories") == remote)
        }
    }

    @Test func clientWinsSendsTheEditUnconditionally() async throws {
        try await conflict(.clientWins) { server, _ in
            let remote = try await server.objects(in: "categories")
            #expect(remote["1"]?["title"] as? String == "Groceries")
            #expect((remote["1"]?["amount"] as? NSNumber)?.doubleValue == 450)
        }
    }

    @Test func aCustomPolicyMergesAgainstTheServersVersion() async throws {
        let policy = ConflictPolicy.custom { conflict in
            // Both edits survive: the merge is re-sent conditionally on the version the app saw now.
            let server = String(decoding: conflict.serverRecord?.json ?? Data(), as: UTF8.self)
            #expect(server.contains(#""title":"Groceries""#))
            return .replace(body: #"{"amount":"450.00","title":"Groceries (merged)"}"#, ifMatch: conflict.serverETag)
        }
        try await conflict(policy) { server, _ in
            let remote = try await server.objects(in: "categories")
            #expect(remote["1"]?["title"] as? String == "Groceries (merged)")
            #expect((remote["1"]?["amount"] as? NSNumber)?.doubleValue == 450)
        }
    }
}
