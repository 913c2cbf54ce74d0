import BudgetAPI
import BudgetSync
import Foundation
import Testing
import APITestSupport
import TestSupport

/// BudgetSync on a server with users (docs/households.md, docs/budgetsync.md): each client syncs one ledger
/// with its user's token, and sees nothing of another household's.
@Suite struct LedgerSyncTests {
    static var options: BudgetApp.Options {
        var options = BudgetApp.Options()
        options.signupIsOpen = true
        options.passwordCost = 10  // test-only: a cheap scrypt
        return options
    }

    /// Signs `name` up and logs in: the user's first ledger and a token for it.
    static func user(_ name: String, on server: TestApp) async throws -> (ledger: Int64, token: String) {
        let body = #"{"name":"\#(name)","password":"correct horse"}"#
        let created = try await server.request("POST", "/auth/users", json: body)
        #expect(created.status == 201, "\(created.text)")
        let login = try await server.request("POST", "/auth/tokens", json: body)
        let token = try #require(login.object["token"] as? String, "\(login.text)")
        let me = try await server.request("GET", "/auth/me", headers: [("Authorization", "Bearer \(token)")])
        let ledger = try #require(me.object["defaultLedgerId"] as? Int, "\(me.text)")
        return (Int64(ledger), token)
    }

    @Test func eachClientSyncsItsOwnLedgerWithItsToken() async throws {
        try await TestApp.with(options: Self.options) { server in
            let alice = try await Self.user("alice", on: server)
            let bob = try await Self.user("bob", on: server)
            #expect(alice.ledger != bob.ledger)
            let make = { (user: (ledger: Int64, token: String), device: String) throws -> (SyncClient, FileSyncStore) in
                try server.makeClient(device: device, collections: ["categories", "transactions"]) { configuration in
                    let scoped = SyncClient.Configuration(
                        server: server.baseURL, ledger: user.ledger, token: user.token,
                        collections: configuration.collections, deviceID: device)
                    configuration.baseURL = scoped.baseURL
                    configuration.headers = scoped.headers
                }
            }
            let (aliceClient, aliceStore) = try make(alice, "alice-phone")
            let (bobClient, bobStore) = try make(bob, "bob-phone")

            // Both households use category id 1, and the same idempotency keys (one device id prefix each,
            // but the same operations): each ledger keeps its own.
            try await aliceClient.enqueue(.put, "/categories/1", body: #"{"title":"Groceries","amount":400}"#)
            try await bobClient.enqueue(.put, "/categories/1", body: #"{"title":"Bob's canary","amount":50}"#)
            try await bobClient.enqueue(
                .post, "/transactions", body: #"{"categoryId":1,"title":"Bob's canary too","amount":"9.99","date":"2026-11-20"}"#)
            #expect(try await aliceClient.push().count == 1)
            #expect(try await bobClient.push().count == 2)
            try await aliceClient.pull()
            try await bobClient.pull()

            let aliceCategories = try await aliceStore.objects(in: "categories")
            #expect(aliceCategories.count == 1)
            #expect(aliceCategories["1"]?["title"] as? String == "Groceries")
            #expect(try await aliceStore.objects(in: "transactions").isEmpty)
            let aliceJSON = try await aliceStore.records(in: "categories").values.map { String(decoding: $0.json, as: UTF8.self) }
            #expect(!aliceJSON.contains { $0.contains("canary") })

            #expect(try await bobStore.objects(in: "categories")["1"]?["title"] as? String == "Bob's canary")
            #expect(try await bobStore.objects(in: "transactions").count == 1)
            // The client's view is the server's view of that ledger.
            let bobServer = try await server.request(
                "GET", "/ledgers/\(bob.ledger)/transactions", headers: [("Authorization", "Bearer \(bob.token)")])
            #expect(bobServer.status == 200)
            #expect((try bobServer.json() as? [Any])?.count == 1)
        }
    }
}
