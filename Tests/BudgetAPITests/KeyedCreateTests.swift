import APITestSupport
import BudgetAPI
import Foundation
import Testing
import TestSupport

/// A keyed create on a route that writes its row in one INSERT (`POST /transactions`,
/// `/categories/{id}/transactions`, `/accounts/{id}/transactions`) is one statement that writes the record and
/// keeps it under the key (docs/sync.md, "How a push is written"; migrations/0024); a retry renders the kept row
/// again. Everything a key promises (docs/sync.md, "Idempotency keys") holds for it as for any keyed write.
@Suite struct KeyedCreateTests {
    static let keyHeader = "Idempotency-Key"
    static let replayedHeader = "Idempotent-Replayed"
    static let train = #"{"title":"Train","amount":"-89.90","date":"2026-11-20"}"#

    /// One category (id 1) to create transactions under.
    static func withCategory(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with { app in
            let category = try await app.request("POST", "/categories", json: #"{"title":"Travel","amount":"300.00"}"#)
            #expect(category.status == 201, "\(category.text)")
            try await body(app)
        }
    }

    @Test func theRecordAndItsKeyAreOneStatementAndARetryReplaysTheSameAnswer() async throws {
        try await Self.withCategory { app in
            let key = [(Self.keyHeader, "device-a/op-1")]
            let first = try await app.request("POST", "/categories/1/transactions", json: Self.train, headers: key)
            #expect(first.status == 201, "\(first.text)")
            #expect(first.header(Self.replayedHeader) == nil)
            // The same command of the same transaction wrote both rows: one statement, not a transaction of two.
            let together = try await app.scalar(
                """
                SELECT (t.xmin::text = k.xmin::text AND t.cmin::text = k.cmin::text AND k.written_row IS NOT NULL)::text
                FROM transactions t, idempotency_keys k
                """)
            #expect(together == "true")

            let unkeyed = try await app.request("POST", "/categories/1/transactions", json: Self.train)
            for retry in [
                try await app.request("POST", "/categories/1/transactions", json: Self.train, headers: key),
                try await app.request("POST", "/categories/1/transactions", json: Self.train, headers: key),
            ] {
                #expect(retry.status == 201)
                #expect(retry.header(Self.replayedHeader) == "true")
                #expect(retry.body == first.body, "\(retry.text) vs \(first.text)")
                for name in ["Location", "ETag", "Content-Type"] { #expect(retry.header(name) == first.header(name), "\(name)") }
                #expect(IdempotencyTests.headerNames(retry) == IdempotencyTests.headerNames(first), "\(retry.headers) vs \(first.headers)")
            }
            // The answer is the route's own: the same headers an unkeyed create gets, and the record a read finds.
            #expect(IdempotencyTests.headerNames(first) == IdempotencyTests.headerNames(unkeyed))
            let read = try await app.request("GET", first.header("Location") ?? "-")
            #expect(read.body == first.body)
            #expect(read.header("ETag") == first.header("ETag"))
            #expect(try await app.scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM transactions") == "1,2")
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
        }
    }

    @Test(arguments: ["/transactions", "/categories/1/transactions", "/accounts/1/transactions", "/ledgers/default/transactions"])
    func everyCombinableCreateRouteWritesOnceAndReplays(path: String) async throws {
        try await Self.withCategory { app in
            let account = try await app.request("POST", "/accounts", json: #"{"name":"Checking","type":"checking"}"#)
            #expect(account.status == 201, "\(account.text)")
            let body = #"{"categoryId":1,"title":"Fare","amount":"-2.50","date":"2026-11-21"}"#
            let key = [(Self.keyHeader, "route-\(path)")]
            let first = try await app.request("POST", path, json: body, headers: key)
            #expect(first.status == 201, "\(first.text)")
            #expect(try await app.scalar("SELECT count(*) FROM idempotency_keys WHERE written_row IS NOT NULL") == "1")
            let retry = try await app.request("POST", path, json: body, headers: key)
            #expect(retry.header(Self.replayedHeader) == "true")
            #expect(retry.body == first.body)
            #expect(retry.header("Location") == first.header("Location"))
            #expect(try await app.rowCount(of: "transactions") == 1)
        }
    }

    @Test func theKeyOnAnotherRequestIs422AndWritesNothing() async throws {
        try await Self.withCategory { app in
            let key = [(Self.keyHeader, "used-once")]
            let first = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"A","amount":"-1.00"}"#, headers: key)
            #expect(first.status == 201, "\(first.text)")
            let otherBody = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"B","amount":"-1.00"}"#, headers: key)
            #expect(otherBody.status == 422, "\(otherBody.text)")
            let otherRoute = try await app.request("POST", "/categories", json: #"{"title":"C","amount":1}"#, headers: key)
            #expect(otherRoute.status == 422, "\(otherRoute.text)")
            #expect(try await app.rowCount(of: "transactions") == 1)
            #expect(try await app.rowCount(of: "categories") == 1)
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
        }
    }

    /// A refused create (a category the ledger lacks, an id taken) answers exactly what it answers without a
    /// key, and keeps nothing: the key runs again once the request is fixed.
    @Test func aRefusedCreateAnswersAsWithoutAKeyAndKeepsNothing() async throws {
        try await Self.withCategory { app in
            for (path, body) in [
                ("/categories/9/transactions", Self.train),
                ("/transactions", #"{"categoryId":9,"title":"T","amount":"-1.00"}"#),
            ] {
                let unkeyed = try await app.request("POST", path, json: body)
                let keyed = try await app.request("POST", path, json: body, headers: [(Self.keyHeader, "refused")])
                #expect(keyed.status == unkeyed.status)
                #expect(keyed.status == 404 || keyed.status == 422, "\(keyed.text)")
                #expect(keyed.body == unkeyed.body, "\(keyed.text) vs \(unkeyed.text)")
            }
            let taken = try await app.request("POST", "/transactions", json: #"{"id":5,"categoryId":1,"title":"T","amount":"-1.00"}"#)
            #expect(taken.status == 201)
            let unkeyed = try await app.request("POST", "/transactions", json: #"{"id":5,"categoryId":1,"title":"U","amount":"-1.00"}"#)
            let keyed = try await app.request(
                "POST", "/transactions", json: #"{"id":5,"categoryId":1,"title":"U","amount":"-1.00"}"#, headers: [(Self.keyHeader, "refused")])
            #expect(keyed.status == 409, "\(keyed.text)")
            #expect(keyed.body == unkeyed.body)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
            #expect(try await app.rowCount(of: "transactions") == 1)

            let fixed = try await app.request("POST", "/categories/1/transactions", json: Self.train, headers: [(Self.keyHeader, "refused")])
            #expect(fixed.status == 201, "\(fixed.text)")
            #expect(fixed.header(Self.replayedHeader) == nil)
        }
    }

    /// An expired key's row is replaced by the request that uses the key next, through the general way (its
    /// answer then stored as an answer): the kept row of the first create must not come back.
    @Test func anExpiredKeptRowIsReplacedAndNeverReplayedAgain() async throws {
        try await Self.withCategory { app in
            let key = [(Self.keyHeader, "expires")]
            let before = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Before","amount":"-1.00"}"#, headers: key)
            #expect(before.status == 201)
            #expect(try await app.scalar("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' RETURNING key") == "expires")

            let after = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"After","amount":"-1.00"}"#, headers: key)
            #expect(after.status == 201, "\(after.text)")
            #expect(after.header(Self.replayedHeader) == nil)
            #expect(after.body != before.body)
            let retry = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"After","amount":"-1.00"}"#, headers: key)
            #expect(retry.header(Self.replayedHeader) == "true")
            #expect(retry.body == after.body, "\(retry.text) vs \(after.text)")
            let old = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Before","amount":"-1.00"}"#, headers: key)
            #expect(old.status == 422)
            #expect(try await app.rowCount(of: "transactions") == 2)
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
        }
    }

    @Test func concurrentCreatesWithOneKeyWriteOnce() async throws {
        try await Self.withCategory { app in
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await app.request("POST", "/categories/1/transactions", json: Self.train, headers: [(Self.keyHeader, "race")])
                    }
                }
                var answers: [TestResponse] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            let original = answers.filter { $0.status == 201 && $0.header(Self.replayedHeader) == nil }
            #expect(original.count == 1, "\(answers.map { "\($0.status) \($0.header(Self.replayedHeader) ?? "-")" })")
            for answer in answers where answer.status == 201 { #expect(answer.body == original.first?.body) }
            #expect(answers.allSatisfy { $0.status == 201 || $0.status == 409 })
            #expect(try await app.rowCount(of: "transactions") == 1)
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
        }
    }

    /// A batch operation with a key a single create kept replays that create's answer, atomic or not.
    @Test(arguments: [true, false])
    func aBatchOperationReplaysAKeptRow(atomic: Bool) async throws {
        try await Self.withCategory { app in
            let first = try await app.request("POST", "/categories/1/transactions", json: Self.train, headers: [(Self.keyHeader, "pushed")])
            #expect(first.status == 201, "\(first.text)")
            let batch = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":\(atomic),"operations":[{"method":"POST","path":"/categories/1/transactions","body":\(Self.train),"idempotencyKey":"pushed"},\
                    {"method":"POST","path":"/categories/1/transactions","body":\(Self.train)}]}
                    """)
            #expect(batch.status == 200, "\(batch.text)")
            let results = try #require(batch.object["results"] as? [[String: Any]])
            #expect(results.count == 2)
            let replayed = try #require(results.first)
            let headers = replayed["headers"] as? [String: String] ?? [:]
            #expect(replayed["status"] as? Int == 201)
            #expect(headers[Self.replayedHeader] == "true", "\(replayed)")
            #expect(headers["Location"] == first.header("Location"))
            #expect(headers["ETag"] == first.header("ETag"))
            let body = try JSONSerialization.data(withJSONObject: try #require(replayed["body"]), options: [.sortedKeys])
            let firstBody = try JSONSerialization.data(withJSONObject: first.object, options: [.sortedKeys])
            #expect(body == firstBody)
            #expect(try await app.rowCount(of: "transactions") == 2)
        }
    }
}
