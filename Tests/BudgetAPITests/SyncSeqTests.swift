import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

/// `X-Sync-Seq` on every GET of a list or record (docs/sync.md): load, then follow `/changes` from it.
@Suite struct SyncSeqTests {
    /// Every kind of GET route, after two typed and two generic writes.
    static let readPaths = [
        "/categories", "/categories/1", "/categories/1/transactions", "/transactions", "/transactions/1",
        "/transactions?_page=1&_per_page=1", "/notes", "/notes/1", "/profile", "/posts/1/notes", "/db",
    ]

    @Test(arguments: readPaths)
    func everyReadCarriesTheFeedPosition(path: String) async throws {
        var options = BudgetApp.Options()
        options.allowsReset = true
        try await TestApp.with(options: options, poolConfiguration: TestApp.smallPool) { app in
            let seeded = try await app.request(
                "PUT", "/db", json: #"{"posts":[{"id":1}],"notes":[{"id":1,"postId":1,"text":"a"}],"profile":{"name":"x"}}"#)
            #expect(seeded.status == 200)
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Bread","amount":"2.50"}"#)
            let position = try await app.changes().lastSeq
            let response = try await app.request("GET", path)
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("X-Sync-Seq") == String(position), "GET \(path)")
        }
    }

    @Test func loadingThenFollowingTheFeedMissesNothingAndRepeatsNothing() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            for title in ["A", "B", "C"] {
                _ = try await app.request("POST", "/categories", json: #"{"title":"\#(title)","amount":1}"#)
            }
            // GET /changes catches the sequencer up, so the list's X-Sync-Seq covers all three writes.
            _ = try await app.changes()
            let list = try await app.request("GET", "/categories")
            let loaded = list.array.compactMap { $0["title"] as? String }
            let since = try #require(list.header("X-Sync-Seq"))
            _ = try await app.request("POST", "/categories", json: #"{"title":"D","amount":1}"#)
            _ = try await app.request("DELETE", "/categories/1")
            let feed = try await app.changes("since=\(since)")
            // Exactly the two writes after the load: D's creation and A's deletion, nothing loaded already.
            #expect(loaded == ["A", "B", "C"])
            #expect(feed.changes.map { "\($0["op"] ?? "")-\($0["id"] ?? "")" } == ["upsert-4", "delete-1"])
        }
    }

    @Test func aStampedWriteMovesThePositionOfTheNextRead() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let before = try await app.request("GET", "/categories").header("X-Sync-Seq")
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            _ = try await app.changes()
            let after = try await app.request("GET", "/categories").header("X-Sync-Seq")
            #expect(before == "0")
            #expect(after == "1")
        }
    }

    @Test func purgedTombstonesKeepThePositionFromMovingBack() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            _ = try await app.request("DELETE", "/categories/1")
            // 1 or 2: the creation and the deletion may be stamped in one run or in two.
            let position = try await app.changes().lastSeq
            #expect(position >= 1)
            // The newest change is a tombstone; purging it must not hand out a position below it.
            _ = try await app.scalar("SELECT purge_change_tombstones(interval '0 seconds')")
            #expect(try await app.scalar("SELECT purged_seq FROM change_feed_state") == String(position))
            let response = try await app.request("GET", "/categories")
            #expect(response.header("X-Sync-Seq") == String(position))
        }
    }

    /// A change commits before the sequencer stamps it: a list read in between already holds the record but
    /// reports the older position, so following the feed from there shows the record again at the same
    /// version. A repeat, never a miss (docs/change-feed.md).
    @Test func aReadBeforeTheStampRepeatsTheChangeInTheFeedAtTheSameVersion() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            // Written behind the server's back, so no sequencer run is asked for until /changes catches up.
            _ = try await app.scalar("INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'Unstamped', 5) RETURNING id")
            let list = try await app.request("GET", "/categories")
            #expect(list.array.map { $0["title"] as? String } == ["Unstamped"])
            #expect(list.header("X-Sync-Seq") == "0")
            let feed = try await app.changes("since=0")
            #expect(feed.changes.map { "\($0["op"] ?? "")-\($0["id"] ?? "")-v\($0["version"] ?? "")" } == ["upsert-1-v1"])
            #expect(feed.lastSeq == 1)
        }
    }
}
