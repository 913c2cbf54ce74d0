import Foundation
import Postgres
import TestSupport
import Testing

/// The comments `psql` shows on our tables, columns, views and functions (`\dt+`, `\d+`) must point at
/// something a user of the repository has: a `docs/` page that exists, never a document kept elsewhere.
@Suite struct SchemaCommentTests {
    /// Every comment on an object the migrations created (user objects have OIDs from 16384 on).
    private func comments() async throws -> [String] {
        let url = try await TestDatabase.fresh()
        return try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            return try connection.query("SELECT description FROM pg_description WHERE objoid >= 16384")
                .map { try $0.decode(String.self, at: 0) }
        }
    }

    @Test func commentsCiteNothingOutsideTheRepository() async throws {
        let comments = try await comments()
        #expect(comments.count > 50)
        #expect(comments.filter { $0.contains("SPEC") || $0.contains("../shared") } == [])
    }

    @Test func commentsCiteDocsPagesThatExist() async throws {
        // The package's folder, from this file's place in it (Tests/PostgresTests/).
        let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let pattern = try Regex(#"docs/[A-Za-z0-9_-]+\.md"#)
        var cited: Set<String> = []
        for comment in try await comments() {
            for match in comment.matches(of: pattern) { cited.insert(String(comment[match.range])) }
        }
        #expect(!cited.isEmpty)
        for path in cited.sorted() {
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path), "\(path) is cited but missing")
        }
    }
}
