import Foundation
import Testing
import APITestSupport

/// `budgets`, a month's budget per category (docs/api.md, Months): REST, nested routes, the month route with
/// its ETag, the change feed, batches, idempotency keys, seed and export.
@Suite struct BudgetTests {
    static func withCategory(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with { app in
            let created = try await app.request("POST", "/categories", json: #"{"title":"Groceries","amount":400}"#)
            #expect(created.status == 201)
            try await body(app)
        }
    }

    @Test func createReadUpdateAndDelete() async throws {
        try await Self.withCategory { app in
            let created = try await app.request("POST", "/budgets", json: #"{"categoryId":1,"month":"2026-11","amount":"450.5"}"#)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.header("Location") == "/budgets/1")
            let createdAt = try #require(created.object["createdAt"] as? String)
            #expect(
                created.text
                    == #"{"id":1,"categoryId":1,"month":"2026-11","amount":450.50,"createdAt":"\#(createdAt)","updatedAt":"\#(createdAt)","version":1}"#
            )
            #expect(try await app.request("GET", "/budgets/1").text == created.text)
            #expect(try await app.scalar("SELECT month::text FROM budgets WHERE id = 1") == "2026-11-01")

            let patched = try await app.request("PATCH", "/budgets/1", json: #"{"amount":0}"#)
            #expect(patched.status == 200 && patched.text.contains(#""amount":0.00"#) && patched.object["version"] as? Int == 2)
            let replaced = try await app.request("PUT", "/budgets/1", json: #"{"categoryId":1,"month":"2026-12","amount":1}"#)
            #expect(replaced.status == 200 && replaced.object["month"] as? String == "2026-12")
            let put = try await app.request("PUT", "/budgets/9", json: #"{"categoryId":1,"month":"2027-01","amount":2}"#)
            #expect(put.status == 201 && put.header("Location") == "/budgets/9")

            #expect(try await app.request("GET", "/budgets?month=2026-12").array.map { $0["id"] as? Int } == [1])
            #expect(try await app.request("GET", "/budgets?month_gte=2027-01").array.map { $0["id"] as? Int } == [9])
            #expect(try await app.request("GET", "/budgets?month=2026-13").status == 400)
            let expanded = try await app.request("GET", "/budgets/9?_expand=category")
            #expect((expanded.object["category"] as? [String: Any])?["title"] as? String == "Groceries")

            let deleted = try await app.request("DELETE", "/budgets/9")
            #expect(deleted.status == 200 && deleted.text == put.text)
            #expect(try await app.request("GET", "/budgets/9").status == 404)
        }
    }

    @Test func oneBudgetPerCategoryAndMonth() async throws {
        try await Self.withCategory { app in
            #expect(try await app.request("POST", "/budgets", json: #"{"categoryId":1,"month":"2026-11","amount":1}"#).status == 201)
            let second = try await app.request("POST", "/budgets", json: #"{"categoryId":1,"month":"2026-11","amount":2}"#)
            #expect(second.status == 409 && second.problemFields == ["month"], "\(second.text)")
            #expect(try await app.scalar("SELECT count(*) FROM budgets") == "1")
        }
    }

    @Test(arguments: [
        (#"{"categoryId":1,"month":"2026-13","amount":1}"#, ["month"]),
        (#"{"categoryId":1,"month":"2026-11-01","amount":1}"#, ["month"]),
        (#"{"categoryId":1,"month":202611,"amount":1}"#, ["month"]),
        (#"{"categoryId":1,"month":"2026-11","amount":-1}"#, ["amount"]),
        (#"{"categoryId":1,"month":"2026-11","amount":"1.005"}"#, ["amount"]),
        (#"{"categoryId":2,"month":"2026-11","amount":1}"#, ["categoryId"]),
        (#"{"month":"2026-1","amount":"x"}"#, ["categoryId", "month", "amount"]),
    ])
    func invalidBudgetsAre422AndWriteNothing(body: String, fields: [String]) async throws {
        try await Self.withCategory { app in
            let answer = try await app.request("POST", "/budgets", json: body)
            #expect(answer.status == 422, "\(body): \(answer.text)")
            #expect(answer.problemFields == fields, "\(body): \(answer.text)")
            if fields != ["categoryId"] {
                let month = try await app.request("PUT", "/categories/1/budgets/2026-11", json: body)
                #expect(month.status == 422, "\(body): \(month.text)")
            }
            #expect(try await app.scalar("SELECT count(*) FROM budgets") == "0")
            _ = try await app.scalar("SELECT advance_change_feed(1000000)")
            #expect(try await app.scalar("SELECT count(*) FROM change_log WHERE collection = 'budgets'") == "0")
        }
    }

    @Test func aCategorysBudgetsAreNestedUnderIt() async throws {
        try await Self.withCategory { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":900}"#)
            let created = try await app.request("POST", "/categories/2/budgets", json: #"{"month":"2026-11","amount":950}"#)
            #expect(created.status == 201 && created.object["categoryId"] as? Int == 2, "\(created.text)")
            _ = try await app.request("POST", "/categories/1/budgets", json: #"[{"month":"2026-11","amount":1},{"month":"2026-12","amount":2}]"#)
            let list = try await app.request("GET", "/categories/1/budgets?_sort=-month")
            #expect(list.array.map { $0["month"] as? String } == ["2026-12", "2026-11"])
            #expect(try await app.request("GET", "/categories/7/budgets").status == 404)
            #expect(try await app.request("POST", "/categories/7/budgets", json: #"{"month":"2026-11","amount":1}"#).status == 404)
        }
    }

    /// `PUT /categories/:id/budgets/:month` creates (201) or replaces (200); `GET` answers it with an ETag that
    /// `If-Match` checks; `DELETE` goes back to the category's amount.
    @Test func theMonthRouteSetsReadsAndRemovesTheMonthsBudget() async throws {
        try await Self.withCategory { app in
            let path = "/categories/1/budgets/2026-11"
            #expect(try await app.request("GET", path).status == 404)
            let created = try await app.request("PUT", path, json: #"{"amount":450}"#)
            #expect(created.status == 201 && created.object["month"] as? String == "2026-11", "\(created.text)")
            let read = try await app.request("GET", path)
            #expect(read.status == 200 && read.text == created.text)
            let tag = try #require(read.header("ETag"))
            #expect(try await app.request("GET", path, headers: [("If-None-Match", tag)]).status == 304)

            let replaced = try await app.request(
                "PUT", path, json: #"{"amount":500,"month":"2026-11","categoryId":1,"id":1,"version":1}"#,
                headers: [("If-Match", tag)])
            #expect(replaced.status == 200 && replaced.object["version"] as? Int == 2 && replaced.object["id"] as? Int == 1, "\(replaced.text)")
            let stale = try await app.request("PUT", path, json: #"{"amount":1}"#, headers: [("If-Match", tag)])
            #expect(stale.status == 412)
            let stillStale = try await app.request("DELETE", path, headers: [("If-Match", tag)])
            #expect(stillStale.status == 412)
            #expect(try await app.request("GET", "/categories/1?month=2026-11").text.contains(#""budgeted":500.00"#))

            let mismatch = try await app.request("PUT", path, json: #"{"amount":1,"month":"2026-12"}"#)
            #expect(mismatch.status == 422 && mismatch.problemFields == ["month"])
            #expect(try await app.request("PUT", "/categories/1/budgets/2026-13", json: #"{"amount":1}"#).status == 400)
            #expect(try await app.request("PUT", "/categories/8/budgets/2026-11", json: #"{"amount":1}"#).status == 404)

            let current = try #require(try await app.request("GET", path).header("ETag"))
            let removed = try await app.request("DELETE", path, headers: [("If-Match", current)])
            #expect(removed.status == 200 && removed.object["amount"] as? Double == 500)
            #expect(try await app.request("DELETE", path).status == 404)
            #expect(try await app.request("GET", "/categories/1?month=2026-11").text.contains(#""budgeted":400.00"#))
        }
    }

    /// Budgets are in the change feed, and deleting their category leaves their tombstones there.
    @Test func theFeedCarriesBudgetsAndTheirCategorysDeletion() async throws {
        try await Self.withCategory { app in
            _ = try await app.request("PUT", "/categories/1/budgets/2026-11", json: #"{"amount":450}"#)
            _ = try await app.request("PUT", "/categories/1/budgets/2026-12", json: #"{"amount":460}"#)
            let budget = try await app.request("GET", "/budgets/1")
            let feed = try await app.changes("collection=budgets")
            #expect(feed.changes.map { $0["id"] as? Int } == [1, 2])
            let upsert = try JSONSerialization.data(withJSONObject: feed.changes[0]["data"] as Any, options: .sortedKeys)
            let record = try JSONSerialization.data(withJSONObject: budget.object, options: .sortedKeys)
            #expect(upsert == record)
            #expect(feed.changes[0]["etag"] as? String == budget.header("ETag"))

            #expect(try await app.request("DELETE", "/categories/1").status == 200)
            let after = try await app.changes("since=\(feed.lastSeq)")
            let tombstones = after.changes.filter { $0["op"] as? String == "delete" }
            #expect(Set(tombstones.map { "\($0["collection"] ?? "")/\($0["id"] ?? "")" }) == ["categories/1", "budgets/1", "budgets/2"])
            #expect(try await app.scalar("SELECT count(*) FROM budgets") == "0")
        }
    }

    @Test func budgetsTakeBatchesAndIdempotencyKeys() async throws {
        try await Self.withCategory { app in
            let batch = try await app.request(
                "POST", "/batch",
                json: #"""
                    {"atomic":true,"operations":[
                     {"method":"PUT","path":"/categories/1/budgets/2026-11","body":{"amount":450}},
                     {"method":"POST","path":"/budgets","body":{"categoryId":1,"month":"2026-12","amount":460}},
                     {"method":"POST","path":"/budgets","body":{"categoryId":1,"month":"2026-12","amount":1}}]}
                    """#)
            #expect(batch.status == 409, "the third operation repeats a month: \(batch.text)")
            #expect(try await app.scalar("SELECT count(*) FROM budgets") == "0")

            let key = [("Idempotency-Key", "budget-1")]
            let first = try await app.request("PUT", "/categories/1/budgets/2026-11", json: #"{"amount":450}"#, headers: key)
            let again = try await app.request("PUT", "/categories/1/budgets/2026-11", json: #"{"amount":450}"#, headers: key)
            #expect(first.status == 201 && again.status == 201)
            #expect(again.header("Idempotent-Replayed") == "true" && again.text == first.text)
            #expect(try await app.scalar("SELECT version FROM budgets") == "1")
        }
    }

    @Test func homePageCountsAndSeedAndExportKeepBudgets() async throws {
        try await TestApp.with { first in
            try await first.seed(
                #"""
                {"categories":[{"id":1,"title":"Fun","amount":"100.00","rollover":true}],
                 "budgets":[{"id":4,"categoryId":1,"month":"2026-11","amount":"80.00"}]}
                """#)
            #expect(try await first.request("GET", "/").text.contains(#"<a href="/budgets">/budgets</a></td><td>typed</td><td class="count">1</td>"#))
            #expect(try await first.request("GET", "/categories/1").text.contains(#""rollover":true"#))
            let exported = try await first.request("GET", "/db").text
            #expect(exported.contains(#""budgets":[{"id":4,"categoryId":1,"month":"2026-11","amount":80.00,"createdAt":"#))
            try await TestApp.with { second in
                try await second.seed(exported)
                #expect(try await second.request("GET", "/db").text == exported)
                // Server ids follow the seeded ones.
                let next = try await second.request("POST", "/budgets", json: #"{"categoryId":1,"month":"2026-12","amount":1}"#)
                #expect(next.object["id"] as? Int == 5)
            }
            let issues = try await first.seedIssues(#"{"budgets":[{"categoryId":1,"month":"2026-13","amount":-1}]}"#)
            #expect(issues.contains { $0.hasPrefix("$.budgets[0].month: ") } && issues.contains { $0.hasPrefix("$.budgets[0].amount: ") })
        }
    }
}
