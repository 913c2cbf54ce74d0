import Foundation
import Testing
import APITestSupport

/// A split and its parts travel together in the change feed (docs/change-feed.md): whatever `limit` a client
/// pulls with, a page never ends between the changes of one split written together, so a client never
/// holds a part without its split, and paging still skips and repeats nothing.
@Suite struct SplitFeedTests {
    /// Written the way psql (or the poster) would: the split and its parts in one statement.
    private static func writeSplit(_ app: TestApp, id: Int, parts: [(id: Int, amount: String)]) async throws {
        let total = parts.reduce(Decimal(0)) { $0 + Decimal(string: $1.amount)! }
        let values = parts.map { "(\($0.id), \($0.amount))" }.joined(separator: ", ")
        _ = try await app.scalar(
            """
            WITH p AS (INSERT INTO transactions (id, title, amount, date, account_id, split)
                       VALUES (\(id), 'Market', \(total), '2026-11-02', 1, true) RETURNING id, title, date)
            INSERT INTO transactions (id, parent_id, category_id, title, amount, date)
            SELECT v.id, p.id, 1, p.title, v.amount, p.date FROM p, (VALUES \(values)) v(id, amount)
            """)
    }

    /// Every page from `since` with `limit`, until the feed says there is no more; the feed's own answers
    /// bound the loop (each page moves lastSeq forward or ends it).
    private static func pages(_ app: TestApp, since: Int64, limit: Int, filter: String = "") async throws -> [[[String: Any]]] {
        var pages: [[[String: Any]]] = []
        var since = since
        for _ in 0..<200 {
            let page = try await app.changes("since=\(since)&limit=\(limit)\(filter)")
            pages.append(page.changes)
            #expect(page.lastSeq > since || !page.hasMore, "the feed did not move on from \(since)")
            guard page.hasMore else { return pages }
            since = page.lastSeq
        }
        Issue.record("the feed still had more after 200 pages of \(limit)")
        return pages
    }

    private static func ids(_ changes: [[String: Any]]) -> [Int] { changes.compactMap { $0["id"] as? Int } }

    @Test func noPageEndsBetweenASplitAndItsParts() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            _ = try await app.request("POST", "/accounts", json: #"{"name":"Checking","type":"checking"}"#)
            for title in ["Bread", "Milk", "Eggs"] {
                _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"\#(title)","amount":"2.50"}"#)
            }
            try await Self.writeSplit(app, id: 100, parts: [(101, "1.00"), (102, "2.00"), (103, "3.00"), (104, "4.00"), (105, "5.00")])
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Tea","amount":"1.50"}"#)
            let family: Set<Int> = [100, 101, 102, 103, 104, 105]
            let everything = try await app.changes("limit=1000").changes
            #expect(everything.count == 12, "\(everything.count) changes")

            for limit in 1...13 {
                for filter in ["", "&collection=transactions"] {
                    let pages = try await Self.pages(app, since: 0, limit: limit, filter: filter)
                    let read = pages.flatMap { $0 }
                    let seqs = read.compactMap { ($0["seq"] as? NSNumber)?.int64Value }
                    #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "limit \(limit)\(filter): \(seqs)")
                    #expect(read.count == (filter.isEmpty ? 12 : 10), "limit \(limit)\(filter): read \(read.count)")
                    let holding = pages.filter { !family.isDisjoint(with: Self.ids($0.filter { $0["collection"] as? String == "transactions" })) }
                    #expect(holding.count == 1, "limit \(limit)\(filter): the split spread over \(holding.count) pages")
                    #expect(family.isSubset(of: Set(Self.ids(holding.first ?? []))), "limit \(limit)\(filter)")
                    // Only a split makes a page longer than asked, and only by the split's own changes.
                    for page in pages where page.count > limit {
                        #expect(page.count <= limit + family.count - 1, "limit \(limit)\(filter): a page of \(page.count)")
                    }
                }
            }
        }
    }

    @Test func aDeletedSplitsTombstonesArriveTogether() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            _ = try await app.request("POST", "/accounts", json: #"{"name":"Checking","type":"checking"}"#)
            try await Self.writeSplit(app, id: 100, parts: [(101, "1.00"), (102, "2.00"), (103, "3.00")])
            let before = try await app.changes("limit=1000").lastSeq
            let deleted = try await app.request("DELETE", "/transactions/100")
            #expect(deleted.status == 200, "\(deleted.status): \(deleted.text)")
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Tea","amount":"1.50"}"#)
            for limit in 1...5 {
                let pages = try await Self.pages(app, since: before, limit: limit)
                let tombstones = pages.map { page in Set(Self.ids(page.filter { $0["op"] as? String == "delete" })) }
                #expect(tombstones.filter { !$0.isEmpty } == [[100, 101, 102, 103]], "limit \(limit): \(tombstones)")
            }
        }
    }
}
