import Foundation
import Testing
import TestSupport
import APITestSupport

/// Writes made outside the server reach the change feed as the server's own do (docs/change-feed.md, "The
/// write path"): psql's INSERT, UPDATE, DELETE and TRUNCATE, an UPDATE that moves a record to another id,
/// and the cascade of a category delete.
@Suite struct ChangeCaptureTests {
    /// The changes after `since` as (collection/id, op, version, title in data), and where to continue.
    private func changes(_ app: TestApp, since: Int64) async throws -> ([String], Int64) {
        let response = try await app.request("GET", "/changes?since=\(since)&limit=1000")
        #expect(response.status == 200, "\(response.text)")
        let object = response.object
        let entries = (object["changes"] as? [[String: Any]] ?? []).map { change in
            let id = change["id"].map { "\($0)" } ?? "null"
            let title = (change["data"] as? [String: Any])?["title"].map { " \($0)" } ?? ""
            return "\(change["collection"] as? String ?? "?")/\(id) \(change["op"] as? String ?? "?") v\(change["version"] as? Int ?? -1)\(title)"
        }
        return (entries, (object["lastSeq"] as? NSNumber)?.int64Value ?? -1)
    }

    @Test func psqlWritesAndCascadesReachTheFeed() async throws {
        try await TestApp.with { app in
            _ = try await app.scalar("INSERT INTO categories (ledger_id, id, title, amount) VALUES (1, 7, 'Psql', 5)")
            _ = try await app.scalar(
                "INSERT INTO transactions (ledger_id, id, category_id, title, amount) VALUES (1, 40, 7, 'Tea', 2), (1, 41, 7, 'Cake', 3)")
            var (feed, cursor) = try await changes(app, since: 0)
            #expect(feed == ["categories/7 upsert v1 Psql", "transactions/40 upsert v1 Tea", "transactions/41 upsert v1 Cake"])

            // The ids psql chose moved the sequences on: the server's next ids come after them.
            let category = try await app.request("POST", "/categories", json: #"{"title":"Server","amount":1}"#)
            #expect(category.object["id"] as? Int == 8)
            let transaction = try await app.request("POST", "/categories/7/transactions", json: #"{"title":"Bun","amount":1}"#)
            #expect(transaction.object["id"] as? Int == 42)

            _ = try await app.scalar("UPDATE transactions SET title = 'Green tea', version = version + 1 WHERE id = 40")
            _ = try await app.scalar("UPDATE categories SET id = 9, version = version + 1 WHERE id = 8")
            (feed, cursor) = try await changes(app, since: cursor)
            // Each record once, at its latest change, in write order: category 8's upsert gave way to its tombstone.
            #expect(
                feed == [
                    "transactions/42 upsert v1 Bun", "transactions/40 upsert v2 Green tea",
                    "categories/8 delete v1", "categories/9 upsert v2 Server",
                ])

            // The cascade, in the order PostgreSQL deletes: the category, then its transactions.
            _ = try await app.scalar("DELETE FROM categories WHERE id = 7")
            (feed, cursor) = try await changes(app, since: cursor)
            #expect(feed.first == "categories/7 delete v1")
            #expect(feed.dropFirst().sorted() == ["transactions/40 delete v2", "transactions/41 delete v1", "transactions/42 delete v1"])

            // TRUNCATE notes every record it removes.
            #expect(try await app.request("POST", "/categories/9/transactions", json: #"{"title":"Pie","amount":1}"#).status == 201)
            _ = try await app.scalar("TRUNCATE transactions")
            (feed, cursor) = try await changes(app, since: cursor)
            #expect(feed == ["transactions/43 delete v1"])
            #expect(try await app.scalar("SELECT count(*) FROM change_pending") == "0")
        }
    }
}
