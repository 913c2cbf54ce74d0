import Foundation
import Testing
import TestSupport

/// A server starts with the change feed caught up: after `--seed`, and after writes made while no server
/// ran, the first lists already carry the position of what they show, so a client that loads the lists
/// and follows the feed from there downloads nothing twice.
@Suite struct FeedPositionAtStartTests {
    /// examples/posts.json, from this file's place in the package (Tests/OperationsTests/).
    static let postsSeed = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples/posts.json").path

    @Test func listsAfterASeedCarryTheSeededPosition() async throws {
        let url = try await TestDatabase.fresh()
        let server = try await ServerProcess.start(["--database-url", url, "--seed", Self.postsSeed])
        let posts = try await server.request("GET", "/posts")
        #expect(posts.status == 200)
        // Seven records: three posts, three comments and the profile.
        #expect(posts.header("X-Sync-Seq") == "7")
        let following = try await GapProof.changes(server, since: 7)
        #expect(following.changes.isEmpty, "\(following.changes)")
        #expect(following.lastSeq == 7)
    }

    @Test func writesMadeWhileNoServerRanAreStampedAtStart() async throws {
        let url = try await TestDatabase.fresh()
        try await GapProof.execute(url, "INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'Offline', 1), (1, 'Also offline', 2)")
        let server = try await ServerProcess.start(["--database-url", url])
        let categories = try await server.request("GET", "/categories")
        #expect(categories.status == 200)
        #expect(categories.header("X-Sync-Seq") == "2")
    }
}
