import ArgumentParser
import BudgetSync
import ExampleSupport
import Foundation

/// The posts app's flow on BudgetSync (docs/budgetsync.md, Examples): list the posts, create one with
/// `201 Created`, and sync again without downloading the list a second time. Against a server seeded
/// with examples/posts.json:
///
///     swift run budget-server --seed examples/posts.json
///     swift run example-posts --title "Written offline"
///
/// Run it twice: the second run's first pull brings only what changed since the first run ended, not
/// the whole list, because the store kept the feed cursor. The store is a `FileSyncStore`, one JSON file.
@main
struct PostsExample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-posts",
        abstract: "List, create and sync json-server posts with BudgetSync.")

    @OptionGroup var sync: SyncOptions

    @Option(help: "The title of the post to create.")
    var title = "Written offline"

    /// A post as examples/posts.json holds it; the server keeps any other members too.
    struct Post: Decodable {
        var id: Int
        var title: String
        var author: String?
        var views: Int?
    }

    func run() async throws {
        let (client, local) = try sync.open(example: "posts", collections: ["posts", "comments"])
        print("store: \(local.url.path), cursor \(await local.cursor().map(String.init) ?? "none")")

        // 1. Sync: the first run reads every record once; later runs only what changed since.
        print("pull: \(try await client.pull())")
        try await listPosts(in: local)

        // 2. Create offline: the write waits in the durable outbox under its idempotency key.
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["title": title, "author": "example", "views": 0]), as: UTF8.self)
        try await client.enqueue(.post, "/posts", body: body)
        print("queued: POST /posts, outbox \(await local.pendingOperations().count)")

        // 3. Push: the server answers the create as the API would, 201 with the new id and Location.
        for acknowledgement in try await client.push() {
            let post = try acknowledgement.record?.decode(Post.self)
            print("pushed: \(acknowledgement.summary), id \(post.map { String($0.id) } ?? "-")")
        }

        // 4. Sync again: the feed holds the one new post, not the list again.
        print("pull: \(try await client.pull())")
        try await listPosts(in: local)
    }

    private func listPosts(in local: FileSyncStore) async throws {
        let posts = try await local.records(in: "posts").values.map { try $0.decode(Post.self) }.sorted { $0.id < $1.id }
        print("posts: \(posts.count)")
        for post in posts {
            print("  \(post.id)  \(post.title)  (\(post.author ?? "anonymous"), \(post.views ?? 0) views)")
        }
    }
}
