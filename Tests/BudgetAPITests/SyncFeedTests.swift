import BudgetAPI
import Foundation
import Postgres
import Testing
import TestSupport
import APITestSupport

extension TestApp {
    /// Two connections are plenty for the sync suites, and keep the whole test run under max_connections.
    static func smallPool(_ url: String) -> PoolConfiguration {
        PoolConfiguration(url: url, size: 2, checkoutTimeout: .seconds(30))
    }

    /// One page of the feed; a failed request ends the test with its answer, rather than reading as an
    /// empty page that a loop would ask for again.
    func changes(_ query: String = "") async throws -> (changes: [[String: Any]], lastSeq: Int64, hasMore: Bool) {
        let response = try await request("GET", "/changes" + (query.isEmpty ? "" : "?" + query))
        guard response.status == 200 else {
            throw UnexpectedAnswer(description: "GET /changes?\(query) answered \(response.status): \(response.text)")
        }
        let object = response.object
        return (
            object["changes"] as? [[String: Any]] ?? [],
            (object["lastSeq"] as? NSNumber)?.int64Value ?? -1,
            object["hasMore"] as? Bool ?? false
        )
    }
}

/// The shape and content of `GET /changes` (docs/sync.md).
@Suite struct SyncFeedTests {
    @Test func feedListsEachRecordOnceAtItsLatestChange() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let empty = try await app.request("GET", "/changes")
            #expect(empty.text == #"{"changes":[],"lastSeq":0,"hasMore":false}"#, "\(empty.status): \(empty.text)")
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Bread","amount":"2.50"}"#)
            _ = try await app.request("PATCH", "/categories/1", json: #"{"amount":"120.00"}"#)
            let feed = try await app.changes()
            #expect(feed.changes.count == 2)
            #expect(feed.hasMore == false)
            let byCollection = Dictionary(uniqueKeysWithValues: feed.changes.map { ($0["collection"] as? String ?? "", $0) })
            let category = try #require(byCollection["categories"])
            #expect(category["id"] as? Int == 1)
            #expect(category["op"] as? String == "upsert")
            #expect(category["version"] as? Int == 2)
            // The category comes after the transaction now: its latest change is the newest.
            #expect(feed.changes.last?["collection"] as? String == "categories")
            #expect(feed.lastSeq == (feed.changes.last?["seq"] as? NSNumber)?.int64Value)
            let seqs = feed.changes.compactMap { ($0["seq"] as? NSNumber)?.int64Value }
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
        }
    }

    @Test func dataIsTheRecordExactlyAsItsOwnGETRendersIt() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Bread","amount":"2.50"}"#)
            let raw = try await app.request("GET", "/changes").text
            let category = try await app.request("GET", "/categories/1").text
            let transaction = try await app.request("GET", "/transactions/1").text
            #expect(raw.contains(#","data":\#(category)}"#), "\(raw)")
            #expect(raw.contains(#"{"seq":2,"collection":"transactions","id":1,"op":"upsert","version":1,"etag":"#), "\(raw)")
            #expect(raw.contains(#""data":\#(transaction)}"#), "\(raw)")
        }
    }

    /// Each upsert carries the ETag its record's GET answers, so an edit of a version seen only in the
    /// feed can be conditional; a stale one is refused (docs/sync.md).
    @Test func upsertsCarryTheETagOfTheirRecordsGET() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"x \"quoted\" ,\"data\":"}],"profile":{"name":"me"}}"#)
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Bread","amount":"2.50"}"#)
            _ = try await app.request("DELETE", "/transactions/1")
            let feed = try await app.changes()
            var tagged = 0
            for change in feed.changes {
                let path = change["id"] is NSNull ? "/\(change["collection"] ?? "")" : "/\(change["collection"] ?? "")/\(change["id"] ?? "")"
                if change["op"] as? String == "delete" {
                    #expect(change["etag"] == nil, "a tombstone has no representation: \(change)")
                    continue
                }
                let current = try await app.request("GET", path)
                #expect(change["etag"] as? String == current.header("ETag"), "\(path): \(change)")
                tagged += 1
            }
            #expect(tagged == 3, "posts/1, profile and categories/1")
            let category = try #require(feed.changes.first { $0["collection"] as? String == "categories" })
            let tag = try #require(category["etag"] as? String)
            #expect(try await app.request("PATCH", "/categories/1", json: #"{"amount":"110.00"}"#, headers: [("If-Match", tag)]).status == 200)
            #expect(try await app.request("PATCH", "/categories/1", json: #"{"amount":"120.00"}"#, headers: [("If-Match", tag)]).status == 412)
        }
    }

    @Test func genericRecordsKeepTheirBodyAndIdAndSingularsHaveNullID() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            try await app.seed(#"{"posts":[{"id":"a1","title":"x"},{"id":7,"n":1.50}],"profile":{"name":"me"}}"#)
            let tagged = try await app.request("GET", "/changes?collection=posts").text
            // Each upsert's tag is checked against its GET in upsertsCarryTheETagOfTheirRecordsGET.
            let raw = tagged.replacing(/,"etag":"\\"[0-9a-f]{32}\\""/, with: "")
            #expect(tagged.count - raw.count == 2 * ##","etag":"\"0123456789abcdef0123456789abcdef\"""##.count, "one tag per upsert")
            #expect(raw.contains(#""collection":"posts","id":"a1","op":"upsert","version":1,"data":{"id":"a1","title":"x"}}"#), "\(raw)")
            #expect(raw.contains(#""collection":"posts","id":7,"op":"upsert","version":1,"data":{"id":7,"n":1.50}}"#), "\(raw)")
            #expect(!raw.contains("profile"))
            let profile = try await app.changes("collection=profile")
            #expect(profile.changes.count == 1)
            #expect(profile.changes.first?["id"] is NSNull)
            _ = try await app.request("DELETE", "/posts/a1")
            let deleted = try await app.changes("collection=posts")
            let tombstone = try #require(deleted.changes.last)
            #expect(tombstone["op"] as? String == "delete")
            #expect(tombstone["id"] as? String == "a1")
            #expect(tombstone["data"] == nil)
        }
    }

    @Test func deletingACategoryLeavesTombstonesForItsTransactionsToo() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            for title in ["a", "b", "c"] {
                _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"\#(title)","amount":"1.00"}"#)
            }
            let before = try await app.changes()
            #expect(try await app.request("DELETE", "/categories/1").status == 200)
            let after = try await app.changes("since=\(before.lastSeq)")
            #expect(after.changes.count == 4)
            #expect(after.changes.allSatisfy { $0["op"] as? String == "delete" && $0["data"] == nil })
            #expect(Set(after.changes.compactMap { $0["collection"] as? String }) == ["categories", "transactions"])
            let category = after.changes.first { $0["collection"] as? String == "categories" }
            #expect(category?["version"] as? Int == 1)
        }
    }

    @Test func pagesFollowLastSeqUntilHasMoreIsFalse() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"1.00"}"#)
            let body = (1...7).map { #"{"categoryId":1,"title":"t\#($0)","amount":"1.00"}"# }.joined(separator: ",")
            #expect(try await app.request("POST", "/transactions", json: "[\(body)]").status == 201)
            var since: Int64 = 0
            var pages: [Int] = []
            var seen: [Int64] = []
            // Bounded: 8 changes in pages of 3 take 3 pages.
            for _ in 0..<10 {
                let page = try await app.changes("since=\(since)&limit=3")
                pages.append(page.changes.count)
                seen += page.changes.compactMap { ($0["seq"] as? NSNumber)?.int64Value }
                since = page.lastSeq
                if !page.hasMore { break }
            }
            #expect(pages == [3, 3, 2])
            #expect(seen.count == 8 && seen == seen.sorted())
            let end = try await app.changes("since=\(since)")
            #expect(end.changes.isEmpty && end.lastSeq == since && !end.hasMore)
            let transactionsOnly = try await app.changes("collection=transactions&limit=1000")
            #expect(transactionsOnly.changes.count == 7)
        }
    }

    /// Each malformed query and its status; one app for all of them keeps the suite's connections few.
    static let badInput: [(query: String, status: Int)] = [
        ("since=-1", 400), ("since=abc", 400), ("since=1.5", 400), ("since=", 400), ("since=99999999999999999999", 400),
        ("limit=0", 400), ("limit=1001", 400), ("limit=x", 400), ("wait=61", 400), ("wait=-1", 400), ("wait=0.5", 400),
        ("collection=nope", 404), ("collection=no%20pe", 404), ("limit=1000&wait=0&since=0", 200),
    ]

    @Test func badInputIsAProblem() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            for (query, status) in Self.badInput {
                let response = try await app.request("GET", "/changes?\(query)")
                #expect(response.status == status, "\(query): \(response.text)")
                if status != 200 {
                    #expect(response.header("Content-Type") == "application/problem+json", "\(query)")
                }
            }
        }
    }
}
