import BudgetSync
import Foundation
import Testing
import APITestSupport
import TestSupport

/// Ten thousand changes arrive page by page: the client never holds more than one page (docs/sync.md).
@Suite struct LargePullTests {
    @Test func tenThousandChangesPullOnePageAtATime() async throws {
        try await TestApp.with { server in
            let posts = (1...10_000).map { #"{"id":\#($0),"title":"post \#($0)","views":\#($0 % 97)}"# }
            try await server.seed(#"{"posts":[\#(posts.joined(separator: ","))]}"#)
            let counter = PageCountingStore()
            let (client, _) = try server.makeClient(device: "bulk", collections: ["posts"], store: counter) { $0.pageLimit = 1000 }
            try await client.pull()
            let pages = await counter.pageSizes
            #expect(pages.reduce(0, +) == 10_000)
            #expect(pages.allSatisfy { $0 <= 1000 }, "each page applied alone: \(pages)")
            #expect(await counter.records == 10_000)
            // The list, read after the pull, reflects the same feed position the pull ended at.
            let list = try await server.request("GET", "/posts?_limit=1")
            #expect(await counter.cursor() == list.header("X-Sync-Seq").flatMap { Int($0) })
        }
    }
}

/// Keeps only counts, so the test shows what the client hands over per call rather than storing it.
actor PageCountingStore: SyncStore {
    private(set) var pageSizes: [Int] = []
    private(set) var records = 0
    private var position: Int?

    func cursor() -> Int? { position }
    func apply(_ changes: [Change], cursor: Int?) {
        if !changes.isEmpty { pageSizes.append(changes.count) }
        records += changes.count
        if let cursor { position = cursor }
    }
    func replaceAll(with records: [Record], cursor: Int) { self.records = records.count; position = cursor }
    func pendingOperations() -> [PendingOperation] { [] }
    func appendOperation(_ operation: PendingOperation) {}
    func updateOperation(_ operation: PendingOperation) {}
    func removeOperations(withKeys keys: Set<String>) {}
}
