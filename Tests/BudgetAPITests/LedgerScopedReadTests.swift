import APITestSupport
import BudgetAPI
import Foundation
import Testing

/// Ledger 2 holds the same ids, titles, import ids, collection names and an Idempotency-Key as ledger 1,
/// plus canary strings; the unscoped API (ledger 1) must never show a canary and never change because
/// of ledger 2 (docs/change-feed.md, per ledger).
@Suite struct LedgerScopedReadTests {
    static let canary = "CANARY-B"

    /// The same shape for both ledgers; ledger 2's carries the canary in notes, bodies and extra records.
    static func seed(canary: String?) -> String {
        let mark = canary.map { " \($0)" } ?? ""
        let extra = canary.map { #",{"id":9,"categoryId":1,"title":"\#($0)","amount":1,"date":"2026-01-09","importId":"only-\#($0)"}"# } ?? ""
        let extraPost = canary.map { #",{"id":9,"title":"\#($0)"}"# } ?? ""
        return """
            {"categories":[{"id":1,"title":"Food","amount":100},{"id":2,"title":"Rent","amount":900}],
             "transactions":[{"id":1,"categoryId":1,"title":"Bread","amount":2.5,"date":"2026-01-05","note":"bakery\(mark)","importId":"imp-1"},
                             {"id":2,"categoryId":2,"title":"Flat","amount":900,"date":"2026-01-01","importId":"imp-2"}\(extra)],
             "budgets":[{"id":1,"categoryId":1,"month":"2026-01","amount":120}],
             "posts":[{"id":1,"title":"hello\(mark)"},{"id":2,"title":"second"}\(extraPost)],
             "comments":[{"id":1,"postId":1,"body":"first\(mark)"},{"id":2,"postId":2,"body":"other"}],
             "profile":{"name":"A\(mark)"}}
            """
    }

    /// Read routes of the unscoped API, with filters, search, relations, sorting, CSV and nested routes.
    static let reads: [(path: String, accept: String?)] = [
        ("/categories", nil), ("/categories?_embed=transactions", nil), ("/categories/1", nil),
        ("/categories/1?_embed=transactions", nil), ("/categories?month=2026-01", nil), ("/categories?title=Food", nil),
        ("/categories/1/transactions", nil), ("/categories/1/budgets", nil), ("/categories/1/budgets/2026-01", nil),
        ("/transactions", nil), ("/transactions?_expand=category", nil), ("/transactions/1?_expand=category", nil),
        ("/transactions?q=bakery", nil), ("/transactions?_sort=-amount", nil), ("/transactions?importId=imp-1", nil),
        ("/transactions", "text/csv"), ("/categories", "text/csv"), ("/budgets", nil),
        ("/months/2026-01", nil), ("/months?from=2025-12&to=2026-02", nil), ("/reports/spending?from=2026-01&to=2026-01", nil),
        ("/reports/spending?from=2026-01&to=2026-01", "text/csv"),
        ("/db", nil), ("/posts", nil), ("/posts/1", nil), ("/posts?title=hello", nil), ("/posts?q=hello", nil),
        ("/posts?_embed=comments", nil), ("/comments?_expand=post", nil), ("/posts/1/comments", nil), ("/profile", nil),
        ("/changes?since=0", nil), ("/changes?since=0&collection=posts", nil), ("/", nil),
    ]

    static func readAll(_ app: TestApp) async throws -> [String: String] {
        var answers: [String: String] = [:]
        for read in reads {
            let response = try await app.request("GET", read.path, headers: read.accept.map { [("Accept", $0)] } ?? [])
            #expect(response.status == 200, "\(read.path)")
            answers["\(read.accept ?? "json") \(read.path)"] =
                "\(response.header("X-Sync-Seq") ?? "-") \(response.header("ETag") ?? "-") \(response.text)"
        }
        return answers
    }

    @Test func ledgerTwoNeverShowsThroughTheUnscopedAPI() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.seed(canary: nil))
            _ = try await app.scalar("SELECT advance_change_feed(1000000)")
            let before = try await Self.readAll(app)

            #expect(try await app.scalar("INSERT INTO ledgers (name) VALUES ('B') RETURNING id") == "2")
            try await app.seed(Self.seed(canary: Self.canary), ledger: LedgerID(2))
            // Ledger 2's feed is its own: numbered from 1, ledger 1's position unchanged.
            _ = try await app.scalar("SELECT advance_change_feed(1000000)")
            #expect(try await app.scalar("SELECT min(seq) FROM change_log WHERE ledger_id = 2") == "1")
            _ = try await app.scalar(
                "INSERT INTO idempotency_keys (ledger_id, key, fingerprint, method, path, status, headers, body) "
                    + "VALUES (2, 'key-1', sha256('x'), 'POST', '/categories', 201, '[]', '\(Self.canary)')")

            let after = try await Self.readAll(app)
            for (key, answer) in after {
                #expect(!answer.contains(Self.canary), "\(key) shows ledger 2: \(answer.prefix(300))")
                #expect(answer == before[key], "\(key) changed because of ledger 2")
            }

            // Ledger 2's key is not ledger 1's: the POST runs, and its answer is no replay.
            let posted = try await app.request(
                "POST", "/categories", json: #"{"title":"Keyed","amount":1}"#, headers: [("Idempotency-Key", "key-1")])
            #expect(posted.status == 201)
            #expect(posted.header("Idempotent-Replayed") == nil)
            #expect(!posted.text.contains(Self.canary))

            // A long-poll of ledger 1 across ledger 2's write answers no change (that the write does not even
            // wake it is NotificationTests' topic test).
            let position = try #require(try await app.request("GET", "/changes?since=0").object["lastSeq"] as? Int)
            async let poll = app.request("GET", "/changes?since=\(position)&wait=1")
            _ = try await app.scalar("UPDATE categories SET amount = 5, version = version + 1 WHERE ledger_id = 2 AND id = 1")
            let answer = try await poll
            #expect(answer.status == 200)
            #expect((answer.object["changes"] as? [Any])?.isEmpty == true)
            #expect(!answer.text.contains(Self.canary))
        }
    }
}
