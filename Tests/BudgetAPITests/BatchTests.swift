import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

extension TestResponse {
    /// A `POST /batch` answer's `results`.
    var batchResults: [[String: Any]] {
        object["results"] as? [[String: Any]] ?? []
    }

    var batchStatuses: [Int] {
        batchResults.map { $0["status"] as? Int ?? -1 }
    }
}

extension Dictionary where Key == String, Value == Any {
    /// A batch result's header.
    func resultHeader(_ name: String) -> String? {
        (self["headers"] as? [String: Any])?.first { $0.key.lowercased() == name.lowercased() }?.value as? String
    }

    var resultBody: [String: Any] {
        self["body"] as? [String: Any] ?? [:]
    }
}

/// Two decoded JSON values are equal.
private func sameJSON(_ left: Any?, _ right: Any?) -> Bool {
    guard let left = left as? NSObject, let right = right as? NSObject else { return false }
    return left.isEqual(right)
}

/// `text` as a JSON string literal's content (quotes and backslashes escaped).
private func jsonEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
}

/// `POST /batch` (docs/sync.md): an offline outbox in one request, all-or-nothing when atomic.
@Suite struct BatchTests {
    static let failedType = "urn:budget-server:problem:batch-operation-failed"

    @Test func anAtomicBatchAppliesEveryOperationAndAnswersThemInOrder() async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Old","amount":5}"#).status == 201)
            let response = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/categories","body":{"id":500,"title":"Groceries","amount":200}},
                      {"method":"POST","path":"/categories/500/transactions","body":{"title":"Milk","amount":3.49}},
                      {"method":"PATCH","path":"/categories/500","body":{"amount":250}},
                      {"method":"DELETE","path":"/categories/1"}
                    ]}
                    """)
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(response.object["atomic"] as? Bool == true)
            let results = response.batchResults
            #expect(response.batchStatuses == [201, 201, 200, 200], "\(response.text)")
            guard results.count == 4 else { return }
            #expect(results[0].resultHeader("Location") == "/categories/500")
            #expect(results[0].resultHeader("Content-Type") == nil)
            #expect(results[0].resultBody["id"] as? Int == 500)
            // Not necessarily 1: a batch runs again when the change feed's sequencer stamped the record it
            // deletes after the batch's snapshot began (docs/change-feed.md), and sequences do not roll back.
            let milkID = results[1].resultBody["id"] as? Int ?? -1
            #expect(results[1].resultHeader("Location") == "/transactions/\(milkID)")
            #expect(results[1].resultBody["categoryId"] as? Int == 500)
            #expect(results[1].resultBody["title"] as? String == "Milk")
            #expect(results[2].resultBody["amount"] as? Double == 250)
            #expect(results[2].resultBody["version"] as? Int == 2)
            #expect(results[2].resultHeader("ETag") != nil)
            #expect(results[3].resultBody["id"] as? Int == 1)
            #expect(results[3].resultBody["title"] as? String == "Old")

            #expect(
                try await app.scalar("SELECT string_agg(id || ' ' || title || ' ' || amount || ' v' || version, ',') FROM categories")
                    == "500 Groceries 250.00 v2")
            #expect(
                try await app.scalar("SELECT string_agg(id || ' ' || category_id || ' ' || title, ',') FROM transactions") == "\(milkID) 500 Milk")
            let category = try await app.request("GET", "/categories/500")
            #expect(category.text.contains(#""amount":250.00,"rollover":false,"spent":3.49"#), "\(category.text)")
            // The ETag an operation answered is the one a GET gives now (nothing changed the record since).
            #expect(category.header("ETag") == results[2].resultHeader("ETag"))
            #expect(try await app.request("GET", "/categories/1").status == 404)
        }
    }

    @Test(arguments: [
        (#"{"method":"PATCH","path":"/categories/999","body":{"amount":1}}"#, 404, [String]()),
        (#"{"method":"PATCH","path":"/categories/500","body":{"amount":"abc"}}"#, 422, ["amount"]),
        (#"{"method":"POST","path":"/categories/500/transactions","body":{"title":"","amount":1}}"#, 422, ["title"]),
    ])
    func aFailingOperationRollsBackTheWholeAtomicBatch(third: String, status: Int, fields: [String]) async throws {
        try await TestApp.with { app in
            let changesBefore = try await app.loggedRecordCount()
            let response = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/categories","body":{"id":500,"title":"Groceries","amount":200},"idempotencyKey":"rolled-back"},
                      {"method":"POST","path":"/categories/500/transactions","body":{"title":"Milk","amount":3}},
                      \(third),
                      {"method":"POST","path":"/categories","body":{"title":"Never reached","amount":1}}
                    ]}
                    """)
            #expect(response.status == status, "\(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
            let problem = response.object
            #expect(problem["type"] as? String == Self.failedType)
            #expect(problem["status"] as? Int == status)
            #expect(problem["operation"] as? Int == 2)
            let failure = problem["failure"] as? [String: Any] ?? [:]
            #expect(failure["status"] as? Int == status, "\(response.text)")
            let failureFields = (failure["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
            #expect(failureFields == fields)

            // Nothing of the operations before it exists, the keyed one's key included.
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "transactions") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
            #expect(try await app.loggedRecordCount() == changesBefore)
            // So the first operation's key is free: sent alone, it runs.
            let alone = try await app.request(
                "POST", "/categories", json: #"{"id":500,"title":"Groceries","amount":200}"#, headers: [("Idempotency-Key", "rolled-back")])
            #expect(alone.status == 201, "\(alone.text)")
            #expect(alone.header("Idempotent-Replayed") == nil)
        }
    }

    @Test(arguments: [#""atomic":false,"#, ""])
    func aNonAtomicBatchAppliesWhatSucceedsAndReportsWhatFailed(atomicMember: String) async throws {
        try await TestApp.with { app in
            let response = try await app.request(
                "POST", "/batch",
                json: """
                    {\(atomicMember)"operations":[
                      {"method":"POST","path":"/categories","body":{"title":"First","amount":1}},
                      {"method":"PATCH","path":"/categories/999","body":{"amount":1}},
                      {"method":"POST","path":"/categories","body":{"title":"","amount":1}},
                      {"method":"POST","path":"/categories","body":{"title":"Last","amount":1}}
                    ]}
                    """)
            #expect(response.status == 200, "\(response.text)")
            #expect(response.object["atomic"] as? Bool == false)
            #expect(response.batchStatuses == [201, 404, 422, 201], "\(response.text)")
            let results = response.batchResults
            guard results.count == 4 else { return }
            #expect(results[1].resultBody["status"] as? Int == 404)
            #expect(results[1].resultBody["type"] != nil)
            #expect(results[2].resultBody["status"] as? Int == 422)
            #expect((results[2].resultBody["errors"] as? [[String: Any]])?.first?["field"] as? String == "title")
            #expect(results[3].resultBody["title"] as? String == "Last")
            #expect(try await app.scalar("SELECT string_agg(title, ',' ORDER BY id) FROM categories") == "First,Last")
        }
    }

    @Test func keyedOperationsReplayWhenTheBatchIsSentAgainOrAlone() async throws {
        try await TestApp.with { app in
            let batch = """
                {"atomic":true,"operations":[
                  {"method":"POST","path":"/categories","body":{"id":7,"title":"Keyed","amount":10},"idempotencyKey":"op-category"},
                  {"method":"POST","path":"/categories/7/transactions","body":{"title":"Tea","amount":2},"idempotencyKey":"op-transaction"}
                ]}
                """
            let first = try await app.request("POST", "/batch", json: batch)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.batchStatuses == [201, 201])
            #expect(first.batchResults.allSatisfy { $0.resultHeader("Idempotent-Replayed") == nil })
            #expect(first.header("Idempotent-Replayed") == nil)
            #expect(try await app.rowCount(of: "idempotency_keys") == 2)

            let again = try await app.request("POST", "/batch", json: batch)
            #expect(again.status == 200, "\(again.text)")
            #expect(again.batchStatuses == [201, 201])
            let results = again.batchResults
            guard results.count == 2, first.batchResults.count == 2 else { return }
            for index in 0..<2 {
                #expect(results[index].resultHeader("Idempotent-Replayed") == "true", "\(again.text)")
                #expect(sameJSON(results[index]["body"], first.batchResults[index]["body"]))
                #expect(results[index].resultHeader("Location") == first.batchResults[index].resultHeader("Location"))
            }
            #expect(try await app.rowCount(of: "categories") == 1)
            #expect(try await app.rowCount(of: "transactions") == 1)
            #expect(try await app.rowCount(of: "idempotency_keys") == 2)

            // The operation's key is the header's key: sent alone, the same request replays too.
            let alone = try await app.request(
                "POST", "/categories/7/transactions", json: #"{"title":"Tea","amount":2}"#, headers: [("Idempotency-Key", "op-transaction")])
            #expect(alone.status == 201, "\(alone.text)")
            #expect(alone.header("Idempotent-Replayed") == "true")
            #expect(alone.header("Location") == first.batchResults[1].resultHeader("Location"))
            #expect(sameJSON(try? alone.json(), first.batchResults[1]["body"]))
            #expect(try await app.rowCount(of: "transactions") == 1)
            // And the key of another request is refused as it would be for the header.
            let reused = try await app.request(
                "POST", "/categories", json: #"{"id":7,"title":"Changed","amount":10}"#, headers: [("Idempotency-Key", "op-category")])
            #expect(reused.status == 422)
            #expect(reused.object["type"] as? String == "urn:budget-server:problem:idempotency-key-reused")
        }
    }

    /// A scoped operation's `Location` and `Content-Location` keep its `/ledgers/{L}` prefix as a single request's
    /// do (docs/api.md, Ledgers), in every form a batch takes: atomic or not, a run of creates written by one INSERT,
    /// a fresh answer or a stored one replayed, the batch sent scoped or not; an unscoped operation's stay as they
    /// were. Every operation is keyed, so the same request sent alone replays what the batch stored, through the
    /// request pipeline: its headers must be the batch's, byte for byte.
    @Test(arguments: [(true, true), (true, false), (false, true), (false, false)])
    func aScopedOperationAnswersTheLocationOfTheSameRequestAlone(atomic: Bool, scopedBatch: Bool) async throws {
        try await TestApp.with(options: HouseholdsTests.options()) { app in
            _ = try await HouseholdsTests.signUp(app, "Alice")
            // Bob's own ledger is not ledger 1, and it is what his unscoped requests act on.
            _ = try await HouseholdsTests.signUp(app, "Bob")
            let token = HouseholdsTests.bearer(try await HouseholdsTests.logIn(app, "Bob").token)
            let ledgers = try await app.request("GET", "/ledgers", headers: token)
            let ledger = try #require(ledgers.array.first?["id"] as? Int)
            #expect(ledger != 1)
            let prefix = "/ledgers/\(ledger)"
            let account = try await app.request("POST", prefix + "/accounts", json: #"{"name":"Cash","type":"cash"}"#, headers: token)
            let accountPath = try #require(account.header("Location"))
            #expect(accountPath.hasPrefix(prefix + "/accounts/"), "\(account.text)")
            // A key whose answer a single request stored, which the batch replays.
            let storedAlone = try await app.request(
                "POST", prefix + "/categories", json: #"{"id":40,"title":"Alone","amount":1}"#,
                headers: token + [("Idempotency-Key", "stored-alone")])
            #expect(storedAlone.status == 201 && storedAlone.header("Location") == prefix + "/categories/40", "\(storedAlone.text)")

            // The first two are a run of creates (one INSERT when atomic).
            let operations: [(method: String, path: String, body: String?, key: String)] = [
                ("POST", prefix + "/categories", #"{"id":41,"title":"Food","amount":10}"#, "run-1"),
                ("POST", prefix + "/categories", #"{"id":42,"title":"Rent","amount":20}"#, "run-2"),
                ("POST", prefix + "/categories/41/transactions", #"{"title":"Tea","amount":2}"#, "transaction"),
                ("POST", accountPath + "/reconcile", #"{"balance":0,"date":"2026-11-30"}"#, "reconcile"),
                ("POST", "/categories", #"{"id":43,"title":"Unscoped","amount":30}"#, "unscoped"),
                ("POST", prefix + "/categories", #"{"id":40,"title":"Alone","amount":1}"#, "stored-alone"),
            ]
            let members = operations.map { operation in
                let body = operation.body.map { #","body":\#($0)"# } ?? ""
                return #"{"method":"\#(operation.method)","path":"\#(operation.path)"\#(body),"idempotencyKey":"\#(operation.key)"}"#
            }
            let batch = #"{"atomic":\#(atomic),"operations":[\#(members.joined(separator: ","))]}"#
            let batchPath = scopedBatch ? prefix + "/batch" : "/batch"
            let first = try await app.request("POST", batchPath, json: batch, headers: token)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.batchStatuses == [201, 201, 201, 200, 201, 201], "\(first.text)")
            let results = first.batchResults
            guard results.count == operations.count else { return }
            #expect(results[0].resultHeader("Location") == prefix + "/categories/41")
            #expect(results[1].resultHeader("Location") == prefix + "/categories/42")
            #expect(results[2].resultHeader("Location")?.hasPrefix(prefix + "/transactions/") == true, "\(first.text)")
            #expect(results[3].resultHeader("Content-Location") == accountPath, "\(first.text)")
            #expect(results[4].resultHeader("Location") == "/categories/43")
            #expect(results[5].resultHeader("Location") == prefix + "/categories/40")
            #expect(results[5].resultHeader("Idempotent-Replayed") == "true")

            // Sent again, the batch replays every stored answer with the same headers.
            let again = try await app.request("POST", batchPath, json: batch, headers: token)
            #expect(again.status == 200, "\(again.text)")
            for (index, result) in again.batchResults.enumerated() {
                #expect(result.resultHeader("Idempotent-Replayed") == "true", "\(index) \(again.text)")
                for name in ["Location", "Content-Location", "ETag"] {
                    #expect(result.resultHeader(name) == results[index].resultHeader(name), "\(index) \(name)")
                }
            }
            // Each operation sent alone with its key replays its answer as the request pipeline gives it.
            for (index, operation) in operations.enumerated() {
                let alone = try await app.request(
                    operation.method, operation.path, json: operation.body, headers: token + [("Idempotency-Key", operation.key)])
                #expect(alone.status == results[index]["status"] as? Int, "\(index) \(alone.text)")
                #expect(alone.header("Idempotent-Replayed") == "true", "\(index)")
                for name in ["Location", "Content-Location", "ETag"] {
                    #expect(alone.header(name) == results[index].resultHeader(name), "\(index) \(name): \(first.text)")
                }
                #expect(sameJSON(try? alone.json(), results[index]["body"]), "\(index)")
            }
        }
    }

    @Test func anIdempotencyKeyOnTheBatchReplaysTheWholeAnswer() async throws {
        try await TestApp.with { app in
            let batch = """
                {"atomic":false,"operations":[
                  {"method":"POST","path":"/categories","body":{"title":"Once","amount":1}},
                  {"method":"PATCH","path":"/categories/999","body":{"amount":1}}
                ]}
                """
            let key = [("Idempotency-Key", "whole-batch")]
            let first = try await app.request("POST", "/batch", json: batch, headers: key)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.batchStatuses == [201, 404])
            #expect(first.header("Idempotent-Replayed") == nil)

            let retry = try await app.request("POST", "/batch", json: batch, headers: key)
            #expect(retry.status == 200)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.body == first.body, "\(retry.text)")
            #expect(try await app.rowCount(of: "categories") == 1)
            #expect(try await app.loggedRecordCount() == 1)

            let otherBatch = try await app.request(
                "POST", "/batch", json: #"{"operations":[{"method":"POST","path":"/categories","body":{"title":"Other","amount":1}}]}"#, headers: key)
            #expect(otherBatch.status == 422)
            #expect(otherBatch.object["type"] as? String == "urn:budget-server:problem:idempotency-key-reused")
            #expect(try await app.rowCount(of: "categories") == 1)
        }
    }

    @Test func aBatchOverTheLimitIs413AndWritesNothing() async throws {
        var options = BudgetApp.Options()
        options.batchLimit = 3
        try await TestApp.with(options: options) { app in
            func operations(_ count: Int) -> String {
                (1...count).map { #"{"method":"POST","path":"/categories","body":{"title":"T\#($0)","amount":1}}"# }.joined(separator: ",")
            }
            let four = operations(4)
            let tooMany = try await app.request("POST", "/batch", json: #"{"atomic":false,"operations":[\#(four)]}"#)
            #expect(tooMany.status == 413, "\(tooMany.text)")
            #expect(tooMany.header("Content-Type") == "application/problem+json")
            #expect(try await app.rowCount(of: "categories") == 0)

            let three = operations(3)
            let atLimit = try await app.request("POST", "/batch", json: #"{"atomic":false,"operations":[\#(three)]}"#)
            #expect(atLimit.status == 200, "\(atLimit.text)")
            #expect(try await app.rowCount(of: "categories") == 3)
        }
    }

    static let validOperation = #"{"method":"POST","path":"/categories","body":{"title":"Valid","amount":1},"idempotencyKey":"valid-op"}"#

    @Test(arguments: [
        (#"{"method":"GET","path":"/categories"}"#, ["operations[1].method"]),
        (#"{"method":"FOO","path":"/categories","body":{}}"#, ["operations[1].method"]),
        (#"{"method":5,"path":"/categories","body":{}}"#, ["operations[1].method"]),
        (#"{"path":"/categories","body":{}}"#, ["operations[1].method"]),
        (#"{"method":"POST","path":"categories","body":{}}"#, ["operations[1].path"]),
        (#"{"method":"POST","path":"/batch","body":{}}"#, ["operations[1].path"]),
        (#"{"method":"POST","path":"/batch/x","body":{}}"#, ["operations[1].path"]),
        (#"{"method":"POST","body":{}}"#, ["operations[1].path"]),
        (#"{"method":"PATCH","path":"/categories/1","body":{},"ifMatch":"abc"}"#, ["operations[1].ifMatch"]),
        (
            #"{"method":"POST","path":"/categories","body":{},"idempotencyKey":"\#(String(repeating: "k", count: 300))"}"#,
            ["operations[1].idempotencyKey"]
        ),
        (#"{"method":"POST","path":"/categories","body":{},"idempotencyKey":""}"#, ["operations[1].idempotencyKey"]),
        (#"{"method":"POST","path":"/categories","body":{},"extra":1}"#, ["operations[1].extra"]),
        (#"{"method":"DELETE","path":"/categories/1","body":{}}"#, ["operations[1].body"]),
        (#"{"method":"GET","path":"x"}"#, ["operations[1].method", "operations[1].path"]),
        (#""POST /categories""#, ["operations[1]"]),
    ])
    func aMalformedOperationIs422NamingItAndWritesNothing(operation: String, fields: [String]) async throws {
        try await TestApp.with { app in
            let response = try await app.request("POST", "/batch", json: #"{"atomic":false,"operations":[\#(Self.validOperation),\#(operation)]}"#)
            #expect(response.status == 422, "\(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(Set(response.problemFields) == Set(fields), "\(response.text)")
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
            #expect(try await app.loggedRecordCount() == 0)
        }
    }

    @Test(arguments: [
        (#"{"atomic":true,"operations":{}}"#, ["operations"]),
        (#"{"atomic":true,"operations":[]}"#, ["operations"]),
        (#"{"atomic":true}"#, ["operations"]),
        (#"{"atomic":"yes","operations":[\#(BatchTests.validOperation)]}"#, ["atomic"]),
        (#"{"atomic":true,"operations":[\#(BatchTests.validOperation)],"extra":1}"#, ["extra"]),
        (#"{"atomic":1,"operations":"all"}"#, ["atomic", "operations"]),
        (
            #"{"atomic":true,"operations":[{"method":"GET","path":"/x"},\#(BatchTests.validOperation),{"method":"POST"}]}"#,
            ["operations[0].method", "operations[2].path"]
        ),
    ])
    func aMalformedBatchIs422NamingTheMembersAndWritesNothing(body: String, fields: [String]) async throws {
        try await TestApp.with { app in
            let response = try await app.request("POST", "/batch", json: body)
            #expect(response.status == 422, "\(response.text)")
            #expect(Set(response.problemFields) == Set(fields), "\(response.text)")
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
        }
    }

    @Test func aBatchThatIsNotJSONOrNotPostIsRefused() async throws {
        try await TestApp.with { app in
            let notJSON = try await app.request("POST", "/batch", json: #"{"atomic":true,"operations":["#)
            #expect(notJSON.status == 400, "\(notJSON.text)")
            #expect(notJSON.header("Content-Type") == "application/problem+json")

            let notAnObject = try await app.request("POST", "/batch", json: #"[\#(Self.validOperation)]"#)
            #expect(notAnObject.status == 400, "\(notAnObject.text)")

            let wrongType = try await app.request(
                "POST", "/batch", json: #"{"operations":[\#(Self.validOperation)]}"#, headers: [("Content-Type", "text/plain")])
            #expect(wrongType.status == 415, "\(wrongType.text)")

            let get = try await app.request("GET", "/batch")
            #expect(get.status == 405)
            #expect(get.header("Allow") == "POST")
            let put = try await app.request("PUT", "/batch", json: #"{"operations":[\#(Self.validOperation)]}"#)
            #expect(put.status == 405)
            #expect(put.header("Allow") == "POST")

            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
        }
    }

    @Test(arguments: [
        ("PATCH", "/nosuch/1", #","body":{"a":1}"#),
        ("DELETE", "/nosuch/1", ""),
        ("PUT", "/a/b/c/d/e", #","body":{"a":1}"#),
    ])
    func anOperationNoRouteKnowsFailsTheAtomicBatchWith404(method: String, path: String, body: String) async throws {
        try await TestApp.with { app in
            let response = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      \(Self.validOperation),
                      {"method":"\(method)","path":"\(path)"\(body)}
                    ]}
                    """)
            #expect(response.status == 404, "\(response.text)")
            #expect(response.object["type"] as? String == Self.failedType)
            #expect(response.object["operation"] as? Int == 1)
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "documents") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
            #expect(try await app.loggedRecordCount() == 0)
        }
    }

    @Test func aStaleIfMatchFailsTheAtomicBatchWith412() async throws {
        try await TestApp.with { app in
            let created = try await app.request("POST", "/categories", json: #"{"title":"Shared","amount":1}"#)
            let staleTag = try #require(created.header("ETag"))
            let edited = try await app.request("PATCH", "/categories/1", json: #"{"amount":2}"#)
            let currentTag = try #require(edited.header("ETag"))
            #expect(staleTag != currentTag)
            let changesBefore = try await app.loggedRecordCount()

            func batch(ifMatch tag: String) -> String {
                """
                {"atomic":true,"operations":[
                  {"method":"POST","path":"/categories","body":{"title":"Fresh","amount":1}},
                  {"method":"PATCH","path":"/categories/1","body":{"amount":9},"ifMatch":"\(jsonEscaped(tag))"}
                ]}
                """
            }
            let stale = try await app.request("POST", "/batch", json: batch(ifMatch: staleTag))
            #expect(stale.status == 412, "\(stale.text)")
            #expect(stale.object["type"] as? String == Self.failedType)
            #expect(stale.object["operation"] as? Int == 1)
            #expect((stale.object["failure"] as? [String: Any])?["status"] as? Int == 412)
            // The failed operation's headers travel too: its ETag is what the client retries with.
            #expect((stale.object["headers"] as? [String: Any])?["ETag"] as? String == currentTag, "\(stale.text)")
            #expect(try await app.scalar("SELECT string_agg(title || ' ' || amount || ' v' || version, ',') FROM categories") == "Shared 2.00 v2")
            #expect(try await app.loggedRecordCount() == changesBefore)

            let current = try await app.request("POST", "/batch", json: batch(ifMatch: currentTag))
            #expect(current.status == 200, "\(current.text)")
            #expect(current.batchStatuses == [201, 200])
            #expect(try await app.scalar("SELECT amount FROM categories WHERE id = 1") == "9.00")
        }
    }

    @Test func theSameKeyTwiceInOneBatchReplaysOrIsRefusedLikeTwoRequests() async throws {
        try await TestApp.with { app in
            let response = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":false,"operations":[
                      {"method":"POST","path":"/categories","body":{"title":"Twice","amount":1},"idempotencyKey":"twice"},
                      {"method":"POST","path":"/categories","body":{"title":"Twice","amount":1},"idempotencyKey":"twice"},
                      {"method":"POST","path":"/categories","body":{"title":"Other","amount":1},"idempotencyKey":"twice"}
                    ]}
                    """)
            #expect(response.status == 200, "\(response.text)")
            #expect(response.batchStatuses == [201, 201, 422], "\(response.text)")
            let results = response.batchResults
            guard results.count == 3 else { return }
            #expect(results[0].resultHeader("Idempotent-Replayed") == nil)
            #expect(results[1].resultHeader("Idempotent-Replayed") == "true")
            #expect(sameJSON(results[1]["body"], results[0]["body"]))
            #expect(results[2].resultBody["type"] as? String == "urn:budget-server:problem:idempotency-key-reused")
            #expect(try await app.rowCount(of: "categories") == 1)
        }
    }

    /// A batch key holds what a header key may (printable ASCII): a NUL used to be cut off by libpq's text
    /// parameters, so `k\u0000a`, `k\u0000b` and the header key `k` were all stored and looked up as `k`.
    @Test func aBatchKeyWithANulIsRefusedNotTruncatedIntoAnotherKey() async throws {
        try await TestApp.with { app in
            let first = try await app.request(
                "POST", "/batch",
                json: #"{"operations":[{"method":"POST","path":"/categories","body":{"title":"A","amount":1},"idempotencyKey":"k\u0000a"}]}"#)
            #expect(first.status == 422, "\(first.text)")
            #expect(first.problemFields == ["operations[0].idempotencyKey"])
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
            // The header key `k` is a key of its own and runs.
            let header = try await app.request("POST", "/categories", json: #"{"title":"C","amount":1}"#, headers: [("Idempotency-Key", "k")])
            #expect(header.status == 201, "\(header.text)")
            #expect(header.header("Idempotent-Replayed") == nil)
        }
    }

    /// The 255 limit is the table's (char_length): a key of 200 "é" written as e + U+0301 (200 grapheme clusters,
    /// 400 code points) used to pass validation, fail the INSERT's CHECK outside the operation's error handling and turn
    /// the whole batch into a 500.
    @Test func aBatchKeyOver255CodePointsIs422Not500() async throws {
        try await TestApp.with { app in
            let key = String(repeating: "e\\u0301", count: 200)
            let response = try await app.request(
                "POST", "/batch",
                json: #"{"operations":[{"method":"POST","path":"/categories","body":{"title":"A","amount":1},"idempotencyKey":"\#(key)"}]}"#)
            #expect(response.status == 422, "\(response.text)")
            #expect(response.problemFields == ["operations[0].idempotencyKey"])
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
        }
    }

    // MARK: an atomic batch's keys, claimed in one statement and stored with its COMMIT

    /// Holds the advisory lock of `key` in ledger 1 the way another server process's request does while it
    /// runs (IdempotencyQueries.claim: lock space "IDKY", the ledger and the key hashed together).
    private static func holdKey(_ key: String, on app: TestApp) async throws -> HeldDatabaseSession {
        let session = try await HeldDatabaseSession.open(app.databaseURL)
        try await session.execute("BEGIN; SELECT pg_advisory_xact_lock(\(0x4944_4B59), hashtext('1:' || '\(key)'))")
        return session
    }

    private static func post(_ title: String, key: String) -> String {
        #"{"method":"POST","path":"/categories","body":{"title":"\#(title)","amount":1},"idempotencyKey":"\#(key)"}"#
    }

    @Test func anAtomicBatchStopsAtItsFirstKeyInProgressElsewhereOrReusedAndWritesNothing() async throws {
        try await TestApp.with { app in
            let stored = try await app.request(
                "POST", "/categories", json: #"{"title":"Stored","amount":1}"#, headers: [("Idempotency-Key", "stored")])
            #expect(stored.status == 201, "\(stored.text)")
            let held = try await Self.holdKey("busy", on: app)
            do {
                // A stored key replays, a new one runs, and the key held elsewhere is that operation's 409.
                let busy = try await app.request(
                    "POST", "/batch",
                    json:
                        #"{"atomic":true,"operations":[\#(Self.post("Stored", key: "stored")),\#(Self.post("New", key: "new")),\#(Self.post("Busy", key: "busy"))]}"#
                )
                #expect(busy.status == 409, "\(busy.text)")
                #expect(busy.object["type"] as? String == Self.failedType)
                #expect(busy.object["operation"] as? Int == 2)
                #expect((busy.object["failure"] as? [String: Any])?["type"] as? String == "urn:budget-server:problem:idempotency-key-in-use")
                // The stored key's answer for another request is that operation's 422, before the busy key is reached.
                let reused = try await app.request(
                    "POST", "/batch",
                    json:
                        #"{"atomic":true,"operations":[\#(Self.post("New", key: "new")),\#(Self.post("Other", key: "stored")),\#(Self.post("Busy", key: "busy"))]}"#
                )
                #expect(reused.status == 422, "\(reused.text)")
                #expect(reused.object["operation"] as? Int == 1)
                #expect((reused.object["failure"] as? [String: Any])?["type"] as? String == "urn:budget-server:problem:idempotency-key-reused")
                // A key used twice in one batch for two requests: the second is refused as a retry would be.
                let twice = try await app.request(
                    "POST", "/batch",
                    json: #"{"atomic":true,"operations":[\#(Self.post("New", key: "new")),\#(Self.post("Changed", key: "new"))]}"#)
                #expect(twice.status == 422, "\(twice.text)")
                #expect(twice.object["operation"] as? Int == 1)
            } catch {
                await held.close()
                throw error
            }
            await held.close()
            #expect(try await app.scalar("SELECT string_agg(title, ',') FROM categories") == "Stored")
            #expect(try await app.scalar("SELECT string_agg(key, ',') FROM idempotency_keys") == "stored")
        }
    }

    @Test func anAtomicBatchOfKeysReplaysStoredAndRepeatedKeysAndReplaysWholeWhenSentAgain() async throws {
        try await TestApp.with { app in
            let stored = try await app.request(
                "POST", "/categories", json: #"{"title":"Stored","amount":1}"#, headers: [("Idempotency-Key", "stored")])
            #expect(stored.status == 201, "\(stored.text)")
            let batch = """
                {"atomic":true,"operations":[\(Self.post("Stored", key: "stored")),\(Self.post("One", key: "one")),
                  {"method":"POST","path":"/categories/1/transactions","body":{"title":"Unkeyed","amount":1}},
                  \(Self.post("One", key: "one")),\(Self.post("Two", key: "two"))]}
                """
            let first = try await app.request("POST", "/batch", json: batch)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.batchStatuses == [201, 201, 201, 201, 201])
            let results = first.batchResults
            guard results.count == 5 else { return }
            #expect(results.map { $0.resultHeader("Idempotent-Replayed") } == ["true", nil, nil, "true", nil])
            #expect(sameJSON(results[0]["body"], try? stored.json()))
            #expect(results[0].resultHeader("Location") == stored.header("Location"))
            #expect(sameJSON(results[3]["body"], results[1]["body"]))
            #expect(results[3].resultHeader("Location") == results[1].resultHeader("Location"))
            #expect(try await app.scalar("SELECT string_agg(title, ',' ORDER BY id) FROM categories") == "Stored,One,Two")
            #expect(try await app.rowCount(of: "transactions") == 1)
            #expect(
                try await app.scalar("SELECT string_agg(key || ' ' || status || ' ' || path, ',' ORDER BY key) FROM idempotency_keys")
                    == "one 201 /categories,stored 201 /categories,two 201 /categories")

            // The same batch again: every keyed operation replays the answer stored with the first; only the
            // unkeyed one writes again.
            let again = try await app.request("POST", "/batch", json: batch)
            #expect(again.status == 200, "\(again.text)")
            let replays = again.batchResults
            guard replays.count == 5 else { return }
            #expect(replays.map { $0.resultHeader("Idempotent-Replayed") } == ["true", "true", nil, "true", "true"])
            for index in [0, 1, 3, 4] {
                #expect(sameJSON(replays[index]["body"], results[index]["body"]), "operation \(index)")
                #expect(replays[index].resultHeader("Location") == results[index].resultHeader("Location"))
                #expect(replays[index].resultHeader("ETag") == results[index].resultHeader("ETag"))
            }
            #expect(try await app.scalar("SELECT string_agg(title, ',' ORDER BY id) FROM categories") == "Stored,One,Two")
            #expect(try await app.rowCount(of: "transactions") == 2)
            #expect(try await app.rowCount(of: "idempotency_keys") == 3)
            // Each key replays alone too, as the header's.
            let alone = try await app.request("POST", "/categories", json: #"{"title":"Two","amount":1}"#, headers: [("Idempotency-Key", "two")])
            #expect(alone.header("Idempotent-Replayed") == "true")
            #expect(alone.header("Location") == results[4].resultHeader("Location"))
        }
    }
}

/// An atomic batch writes a run of consecutive creates on one route in one INSERT (CombinableCreate,
/// docs/sync.md), and answers each as the route alone would.
@Suite struct BatchCombinedCreateTests {
    /// The distinct command ids (`cmin`) of the transactions with these titles: rows one statement inserted
    /// share one.
    fileprivate func statements(writing titles: [String], app: TestApp) async throws -> Int {
        let list = titles.map { "'\($0)'" }.joined(separator: ",")
        return Int(try await app.scalar("SELECT count(DISTINCT cmin::text) FROM transactions WHERE title IN (\(list))") ?? "") ?? -1
    }

    @Test func aRunOfCreatesIsOneInsertAndEachAnswerIsTheRoutesOwn() async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"id":500,"title":"Food","amount":100}"#).status == 201)
            let response = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/categories/500/transactions","body":{"title":"A1","amount":1.5}},
                      {"method":"POST","path":"/categories/500/transactions","body":{"id":900,"title":"A2","amount":-2,"note":"n"},"idempotencyKey":"a2"},
                      {"method":"POST","path":"/categories/500/transactions","body":{"title":"A3","amount":"3.10","date":"2026-01-31"}},
                      {"method":"PATCH","path":"/categories/500","body":{"amount":150}},
                      {"method":"POST","path":"/transactions","body":{"categoryId":500,"title":"B1","amount":4}},
                      {"method":"POST","path":"/transactions","body":{"categoryId":500,"title":"B2","amount":5,"cleared":"cleared"}}
                    ]}
                    """)
            #expect(response.status == 200, "\(response.text)")
            #expect(response.batchStatuses == [201, 201, 201, 200, 201, 201], "\(response.text)")
            let results = response.batchResults
            guard results.count == 6 else { return }
            #expect(results[1].resultBody["id"] as? Int == 900)
            #expect(results[2].resultBody["date"] as? String == "2026-01-31")
            #expect(results[5].resultBody["cleared"] as? String == "cleared")
            // Each create's answer is what its record reads as afterwards, with the same ETag, at its Location.
            for index in [0, 1, 2, 4, 5] {
                let result = results[index]
                let id = result.resultBody["id"] as? Int ?? -1
                #expect(result.resultHeader("Location") == "/transactions/\(id)")
                let read = try await app.request("GET", "/transactions/\(id)")
                #expect(read.status == 200)
                #expect(sameJSON(result["body"], try JSONSerialization.jsonObject(with: Data(read.text.utf8))), "\(index): \(read.text)")
                #expect(result.resultHeader("ETag") != nil && result.resultHeader("ETag") == read.header("ETag"))
            }
            // Two runs, two statements: the first two under the category, and the two on /transactions. A3 has
            // no id after A2 chose one, so it runs alone and gets the id after A2's, as one request each would
            // give it (CombinableCreate.Row.choosesID).
            #expect(try await statements(writing: ["A1", "A2"], app: app) == 1)
            #expect(results[2].resultBody["id"] as? Int == 901, "\(results[2].resultBody)")
            #expect(try await statements(writing: ["B1", "B2"], app: app) == 1)
            #expect(try await statements(writing: ["A1", "A2", "A3", "B1", "B2"], app: app) == 3)
            #expect(try await app.loggedRecordCount() == 6)

            // The keyed one replays, sent again alone, with the answer the run gave it.
            let again = try await app.request(
                "POST", "/categories/500/transactions", json: #"{"id":900,"title":"A2","amount":-2,"note":"n"}"#,
                headers: [("Idempotency-Key", "a2")])
            #expect(again.status == 201)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(sameJSON(results[1]["body"], try JSONSerialization.jsonObject(with: Data(again.text.utf8))))
        }
    }

    /// The run's INSERT fails as a whole; the batch runs again with each operation through its route, so the
    /// failing one answers as it would alone, and nothing is written.
    @Test(arguments: [
        (#"{"method":"POST","path":"/categories/999/transactions","body":{"title":"C3","amount":1}}"#, 404),
        (#"{"method":"POST","path":"/categories/500/transactions","body":{"id":1,"title":"C3","amount":1}}"#, 409),
        (#"{"method":"POST","path":"/transactions","body":{"categoryId":999,"title":"C3","amount":1}}"#, 422),
    ])
    func aRunWhoseInsertFailsAnswersTheFailingOperationAsAlone(third: String, status: Int) async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"id":500,"title":"Food","amount":100}"#).status == 201)
            #expect(try await app.request("POST", "/transactions", json: #"{"id":1,"categoryId":500,"title":"Old","amount":1}"#).status == 201)
            let changesBefore = try await app.loggedRecordCount()
            let path = third.contains(#""/transactions""#) ? "/transactions" : "/categories/500/transactions"
            let body = path == "/transactions" ? #""categoryId":500,"# : ""
            let batch = """
                {"atomic":true,"operations":[
                  {"method":"POST","path":"\(path)","body":{\(body)"title":"C1","amount":1},"idempotencyKey":"c1"},
                  {"method":"POST","path":"\(path)","body":{\(body)"title":"C2","amount":2}},
                  \(third),
                  {"method":"POST","path":"\(path)","body":{\(body)"title":"C4","amount":4}}
                ]}
                """
            let response = try await app.request("POST", "/batch", json: batch)
            #expect(response.status == status, "\(response.text)")
            #expect(response.object["operation"] as? Int == 2, "\(response.text)")
            // The same operation on its own answers the same.
            let alone = try await app.request("POST", "/batch", json: #"{"atomic":true,"operations":[\#(third)]}"#)
            #expect(alone.status == status)
            let failure = response.object["failure"] as? [String: Any] ?? [:]
            let aloneFailure = alone.object["failure"] as? [String: Any] ?? [:]
            #expect(failure["detail"] as? String == aloneFailure["detail"] as? String, "\(response.text) \(alone.text)")
            #expect(try await app.rowCount(of: "transactions") == 1)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
            #expect(try await app.loggedRecordCount() == changesBefore)
        }
    }
}

extension BatchCombinedCreateTests {
    /// With an `Idempotency-Key` on the batch, the batch runs inside the key's transaction (a savepoint): a run
    /// whose INSERT fails still answers as alone, its failure is not stored, and the key then runs the fix.
    @Test func aKeyedBatchWhoseRunFailsStoresNothingAndItsKeyRunsAgain() async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"id":500,"title":"Food","amount":100}"#).status == 201)
            func batch(_ category: Int) -> String {
                """
                {"atomic":true,"operations":[
                  {"method":"POST","path":"/categories/500/transactions","body":{"title":"K1","amount":1}},
                  {"method":"POST","path":"/categories/\(category)/transactions","body":{"title":"K2","amount":2}}
                ]}
                """
            }
            let failed = try await app.request("POST", "/batch", json: batch(999), headers: [("Idempotency-Key", "push-1")])
            #expect(failed.status == 404, "\(failed.text)")
            #expect(failed.object["operation"] as? Int == 1)
            #expect(try await app.rowCount(of: "transactions") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
            let fixed = try await app.request("POST", "/batch", json: batch(500), headers: [("Idempotency-Key", "push-1")])
            #expect(fixed.status == 200, "\(fixed.text)")
            #expect(fixed.batchStatuses == [201, 201])
            #expect(fixed.header("Idempotent-Replayed") == nil)
            #expect(try await statements(writing: ["K1", "K2"], app: app) == 1)
        }
    }
}

extension BatchCombinedCreateTests {
    /// A statement takes at most 65,535 parameters: a batch longer than `BatchRoute.maximumRunLength` writes its
    /// creates in several INSERTs, and stores its answers in several statements, every one of them.
    @Test func aBatchLongerThanOneStatementTakesWritesAndStoresEveryOperation() async throws {
        var options = BudgetApp.Options()
        options.batchLimit = 2_500
        try await TestApp.with(options: options) { app in
            #expect(try await app.request("POST", "/categories", json: #"{"id":500,"title":"Food","amount":100}"#).status == 201)
            let count = 2_100
            let operations = (0..<count).map { index in
                #"{"method":"POST","path":"/categories/500/transactions","body":{"title":"L\#(index)","amount":1},"idempotencyKey":"long-\#(index)"}"#
            }
            let response = try await app.request(
                "POST", "/batch", json: #"{"atomic":true,"operations":[\#(operations.joined(separator: ","))]}"#)
            #expect(response.status == 200, "\(response.text.prefix(300))")
            #expect(response.batchStatuses == Array(repeating: 201, count: count))
            #expect(try await app.rowCount(of: "transactions") == count)
            #expect(try await app.rowCount(of: "idempotency_keys") == count)
            #expect(try await app.scalar("SELECT count(DISTINCT cmin::text) FROM transactions") == "3")
        }
    }
}
