import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

/// Tombstones, their purge, and 410 for a `since` older than what the feed still keeps (docs/sync.md).
@Suite struct SyncTombstoneTests {
    @Test func tombstonesStayWithinTheRetentionWindow() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":1}"#)
            _ = try await app.request("DELETE", "/categories/1")
            // The default window is 30 days; the purge on this read keeps the fresh tombstone.
            let feed = try await app.changes()
            #expect(feed.changes.count == 1)
            #expect(feed.changes.first?["op"] as? String == "delete")
            #expect(try await app.scalar("SELECT purge_change_tombstones(interval '1 day')") == "0")
            #expect(try await app.request("GET", "/changes?since=1").status == 200)
        }
    }

    @Test func aSinceOlderThanThePurgedTombstonesIsGoneWithAResyncProblem() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Keep","amount":1}"#)  // seq 1
            _ = try await app.request("POST", "/categories", json: #"{"title":"Drop","amount":1}"#)  // seq 2
            _ = try await app.request("DELETE", "/categories/2")  // seq 3
            let position = try await app.changes().lastSeq
            #expect(try await app.scalar("SELECT purge_change_tombstones(interval '0 seconds')") == "1")
            let gone = try await app.request("GET", "/changes?since=1")
            #expect(gone.status == 410)
            #expect(gone.header("Content-Type") == "application/problem+json")
            #expect((gone.object["detail"] as? String ?? "").contains("resync from the lists"))
            // At or past the horizon nothing was missed; since=0 is a full resync of the live records.
            let caughtUp = try await app.changes("since=\(position)")
            #expect(caughtUp.changes.isEmpty && caughtUp.lastSeq == position)
            let full = try await app.changes("since=0")
            #expect(full.changes.count == 1)
            #expect(full.lastSeq == position, "the last page ends at the position, past the purge horizon")
            #expect(try await app.request("GET", "/changes?since=\(full.lastSeq)").status == 200)
        }
    }

    @Test func theServerPurgesByItsRetentionOption() async throws {
        var options = BudgetApp.Options()
        options.tombstoneRetention = .zero
        try await TestApp.with(options: options, poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            _ = try await app.request("POST", "/categories", json: #"{"title":"B","amount":1}"#)
            _ = try await app.request("DELETE", "/categories/1")
            let feed = try await app.changes()
            #expect(feed.changes.count == 1, "the tombstone went before the read")
            #expect(try await app.request("GET", "/changes?since=1").status == 410)
        }
    }

    @Test func aRecreatedRecordReplacesItsTombstone() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            _ = try await app.request("DELETE", "/categories/1")
            _ = try await app.request("PUT", "/categories/1", json: #"{"title":"A again","amount":2}"#)
            let feed = try await app.changes()
            #expect(feed.changes.count == 1)
            #expect(feed.changes.first?["op"] as? String == "upsert")
            #expect((feed.changes.first?["data"] as? [String: Any])?["title"] as? String == "A again")
        }
    }
}
