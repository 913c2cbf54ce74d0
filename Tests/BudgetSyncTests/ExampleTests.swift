import BudgetSync
import Foundation
import Testing
import APITestSupport
import TestSupport

/// The two example executables (examples/posts, examples/budget) run as a user runs them, against a
/// server seeded from the db.json beside them; each check reads the server's state, not just the output.
@Suite struct ExampleTests {
    static let examples = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples")

    /// Runs a built example with `arguments` and answers its output lines; it must exit with 0.
    static func run(_ product: String, _ arguments: [String]) async throws -> [String] {
        let executable = try BuiltExecutable.path(of: product)
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("\(product)-\(UUID().uuidString).log").path
        let process = try await ChildProcess.start([executable] + arguments, outputPath: outputPath)
        let status = try await process.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(product) exited with \(status):\n\(process.output)")
        return process.output.split(separator: "\n").map(String.init)
    }

    static func storePath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("example-store-\(UUID().uuidString).json").path
    }

    @Test func thePostsExampleCreatesWith201AndSyncsOnlyWhatChanged() async throws {
        try await TestApp.with { server in
            try await server.seed(String(contentsOf: Self.examples.appendingPathComponent("posts.json"), encoding: .utf8))
            // The example keeps posts and comments; the feed's other collections (the profile) are skipped.
            let feed = try await server.request("GET", "/changes?since=0&limit=1000").object
            let seeded = (feed["changes"] as? [[String: Any]] ?? []).filter { ["posts", "comments"].contains($0["collection"] as? String) }.count
            #expect(seeded == 6)
            let store = Self.storePath()

            let first = try await Self.run("example-posts", ["--server", server.baseURL.absoluteString, "--store", store, "--title", "First"])
            let pulls = first.filter { $0.hasPrefix("pull: ") }
            #expect(pulls.count == 2 && pulls[0].hasPrefix("pull: \(seeded) changes, cursor "), "\(first)")
            #expect(first.contains("posts: 3") && first.contains("posts: 4"), "\(first)")
            #expect(first.contains("pushed: 201 POST /posts, Location /posts/4, id 4"), "\(first)")
            #expect(pulls.last?.hasPrefix("pull: 1 change, cursor ") == true, "only the new post comes back: \(first)")

            // A second launch on the same store downloads nothing it already has.
            let second = try await Self.run("example-posts", ["--server", server.baseURL.absoluteString, "--store", store, "--title", "Second"])
            let secondPulls = second.filter { $0.hasPrefix("pull: ") }
            #expect(secondPulls.first?.hasPrefix("pull: 0 changes, cursor ") == true, "\(second)")
            #expect(secondPulls.last?.hasPrefix("pull: 1 change, cursor ") == true, "\(second)")
            #expect(second.contains("posts: 5"), "\(second)")

            let titles = try await server.objects(in: "posts").values.compactMap { $0["title"] as? String }
            #expect(titles.filter { $0 == "First" }.count == 1 && titles.filter { $0 == "Second" }.count == 1)
            #expect(titles.count == 5)
        }
    }

    @Test func theBudgetExampleSeesSpentComeBackExactly() async throws {
        try await TestApp.with { server in
            try await server.seed(String(contentsOf: Self.examples.appendingPathComponent("budget.json"), encoding: .utf8))
            let before = try #require(Money("\(try await server.request("GET", "/categories/1").object["spent"] ?? "")"))
            let output = try await Self.run(
                "example-budget",
                [
                    "--server", server.baseURL.absoluteString, "--store", Self.storePath(),
                    "--category", "1", "--title", "Coffee", "--amount", "3.20",
                ])
            #expect(output.contains("queued offline: Coffee 3.20, outbox 1"), "\(output)")
            #expect(output.contains { $0.hasPrefix("pushed: 201 POST /categories/1/transactions, Location /transactions/") }, "\(output)")

            // The server's spent moved by exactly the amount, and the example printed that figure.
            let category = try await server.request("GET", "/categories/1")
            let spentText = try #require(
                String(decoding: category.body, as: UTF8.self)
                    .firstMatch(of: /"spent":([0-9.]+)/)
            ).1
            #expect(Money(String(spentText)) == before + Money("3.20")!)
            #expect(output.last?.contains("spent \(spentText) (was ") == true, "\(output)")
            let coffee = try await server.request("GET", "/categories/1/transactions?title=Coffee").array
            #expect(coffee.count == 1)
        }
    }
}
