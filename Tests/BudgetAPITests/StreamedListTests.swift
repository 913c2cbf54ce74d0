@testable import BudgetAPI
import Foundation
import Postgres
import Testing
import TestSupport
import APITestSupport

/// Large answers over real sockets (docs/api.md, Large answers): lists and `/db` over 256 KiB leave in chunks
/// as their rows arrive, with the same bytes a small answer has, a weak `ETag` that answers 304 before any row
/// is read, `--max-rows` with its `Link`, an incomplete body when PostgreSQL fails half way, and a client that
/// leaves freeing its statement at once.
@Suite struct StreamedListTests {
    /// `count` posts of about `size` bytes each, in one statement (the seed path would take longer).
    static func addPosts(_ app: TestApp, count: Int, size: Int = 1000) async throws {
        _ = try await app.scalar("INSERT INTO collections (ledger_id, name, kind, next_id) VALUES (1, 'posts', 'plural', \(count + 1))")
        _ = try await app.scalar(
            """
            INSERT INTO documents (ledger_id, collection, id, body)
            SELECT 1, 'posts', i::text, json_build_object('id', i, 'title', 'post ' || i, 'body', repeat('x', \(size)))::json
            FROM generate_series(1, \(count)) AS i
            """)
    }

    /// What today's answers hold: the JSON array PostgreSQL renders for `element` over `source` in `order`.
    static func renderedInSQL(_ app: TestApp, element: String, source: String, order: String) async throws -> [UInt8] {
        Array(
            try #require(
                try await app.scalar("SELECT coalesce('[' || string_agg((\(element))::text, ',' ORDER BY \(order)) || ']', '[]') FROM \(source)")
            ).utf8)
    }

    /// The records of a JSON array's bytes, each as its own bytes, joined again by commas: pages of a list
    /// concatenate into the whole list this way.
    static func joiningArrays(_ arrays: [[UInt8]]) -> [UInt8] {
        let inner = arrays.map { Array($0.dropFirst().dropLast()) }.filter { !$0.isEmpty }
        return [UInt8(ascii: "[")] + Array(inner.joined(separator: [UInt8(ascii: ",")])) + [UInt8(ascii: "]")]
    }

    @Test func aLargeGenericListIsChunkedWithTheBytesOfSmallAnswers() async throws {
        try await TestApp.with { app in
            try await Self.addPosts(app, count: 400)
            let whole = try await app.request("GET", "/posts")
            #expect(whole.status == 200)
            #expect(whole.isChunked, "400 KB is over the 256 KiB held whole")
            #expect(whole.header("ETag")?.hasPrefix("W/\"") == true)
            #expect(whole.header("X-Sync-Seq") != nil)
            let expected = try await Self.renderedInSQL(app, element: "body", source: "documents WHERE collection = 'posts'", order: "position")
            #expect(whole.body == expected, "the chunks decode to the JSON PostgreSQL renders for the whole list")
            var pages: [[UInt8]] = []
            for page in 1...4 {
                let answer = try await app.request("GET", "/posts?_page=\(page)&_limit=100")
                #expect(answer.status == 200 && !answer.isChunked && answer.header("Content-Length") != nil)
                #expect(answer.header("ETag").map { !$0.hasPrefix("W/") } == true, "a small answer keeps its strong tag")
                pages.append(answer.body)
            }
            #expect(Self.joiningArrays(pages) == whole.body)
            let envelope = try await app.request("GET", "/posts?_per_page=400")
            #expect(envelope.isChunked)
            #expect(
                envelope.body == Array(#"{"first":1,"prev":null,"next":null,"last":1,"pages":1,"items":400,"data":"#.utf8) + expected + [
                    UInt8(ascii: "}")
                ])
        }
    }

    @Test func aLargeListWithEmbeddedRecordsIsTheSameAsItsPages() async throws {
        try await TestApp.with { app in
            try await Self.addPosts(app, count: 300)
            _ = try await app.scalar("INSERT INTO collections (ledger_id, name, kind, next_id) VALUES (1, 'comments', 'plural', 601)")
            _ = try await app.scalar(
                """
                INSERT INTO documents (ledger_id, collection, id, body)
                SELECT 1, 'comments', i::text, json_build_object('id', i, 'postId', (i % 300) + 1, 'text', 'comment ' || i)::json
                FROM generate_series(1, 600) AS i
                """)
            let whole = try await app.request("GET", "/posts?_embed=comments")
            #expect(whole.status == 200 && whole.isChunked)
            var pages: [[UInt8]] = []
            for page in 1...3 {
                let answer = try await app.request("GET", "/posts?_embed=comments&_page=\(page)&_limit=100")
                #expect(answer.status == 200 && !answer.isChunked)
                pages.append(answer.body)
            }
            #expect(Self.joiningArrays(pages) == whole.body)
            let first = try #require((try JSONSerialization.jsonObject(with: Data(whole.body)) as? [[String: Any]])?.first)
            #expect((first["comments"] as? [[String: Any]])?.count == 2)
        }
    }

    /// A typed list of more than `ListAnswer.probeRows` records goes through the cursor and, over 256 KiB, is
    /// chunked; its bytes are those SQL renders, and those of its pages, which are read whole.
    @Test func aLargeTypedListIsChunkedWithTheBytesOfSmallAnswers() async throws {
        try await TestApp.with { app in
            _ = try await app.scalar("INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'Food', 100)")
            _ = try await app.scalar(
                """
                INSERT INTO transactions (ledger_id, category_id, title, amount, date, note)
                SELECT 1, 1, 'purchase number ' || i, (i % 1000) / 10.0, DATE '2026-01-01' + i % 300, repeat('n', i % 100)
                FROM generate_series(1, 1500) AS i
                """)
            let expected = try await Self.renderedInSQL(
                app, element: SQLFragments.jsonObject(columns: Transactions.shape.record.renderedColumns).sql, source: "transactions t", order: "t.id"
            )
            #expect(expected.count > StreamSettings.bufferedBytes)
            for path in ["/transactions", "/categories/1/transactions"] {
                let whole = try await app.request("GET", path)
                #expect(whole.status == 200 && whole.isChunked, "\(path)")
                #expect(whole.body == expected, "\(path)")
                #expect(whole.header("ETag")?.hasPrefix("W/\"") == true)
            }
            var pages: [[UInt8]] = []
            for page in 1...2 {
                let answer = try await app.request("GET", "/transactions?_page=\(page)&_limit=1000")
                #expect(answer.status == 200 && !answer.isChunked)
                pages.append(answer.body)
            }
            #expect(Self.joiningArrays(pages) == expected)
        }
    }

    /// `?month=` gives categories another source (their month figures from `category_months()`); a list of
    /// more categories than the probe reads goes through the cursor over that source, with its own columns.
    @Test func aMonthListOverTheProbeIsReadThroughTheCursorWithItsFigures() async throws {
        try await TestApp.with { app in
            _ = try await app.scalar(
                """
                INSERT INTO categories (ledger_id, title, amount, rollover)
                SELECT 1, 'category number ' || i, 100, i % 2 = 0 FROM generate_series(1, 1200) AS i
                """)
            _ = try await app.scalar(
                """
                INSERT INTO transactions (ledger_id, category_id, title, amount, date)
                SELECT 1, i, 'purchase', 30, DATE '2026-10-15' FROM generate_series(1, 1200) AS i
                """)
            let whole = try await app.request("GET", "/categories?month=2026-11")
            #expect(whole.status == 200)
            let records = try #require(try JSONSerialization.jsonObject(with: Data(whole.body)) as? [[String: Any]])
            #expect(records.count == 1200)
            #expect(records.map { $0["id"] as? Int } == (1...1200).map { $0 })
            // October's 30 spent of 100 carries 70 into November only where the category rolls over.
            #expect(records.allSatisfy { $0["month"] as? String == "2026-11" })
            #expect(records.allSatisfy { ($0["carried"] as? Double) == (($0["rollover"] as? Bool) == true ? 70 : 0) })
            var pages: [[UInt8]] = []
            for page in 1...2 {
                let answer = try await app.request("GET", "/categories?month=2026-11&_page=\(page)&_limit=600")
                #expect(answer.status == 200 && answer.header("X-Total-Count") == "1200")
                pages.append(answer.body)
            }
            #expect(Self.joiningArrays(pages) == whole.body)
        }
    }

    /// The weak tag of a large list answers `If-None-Match` with 304 before a record is read, and a write
    /// changes it at once, before the change feed has stamped the write (docs/sync.md).
    @Test func aStreamedListAnswers304UntilSomethingIsWritten() async throws {
        try await TestApp.with { app in
            try await Self.addPosts(app, count: 400)
            _ = try await app.scalar("INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'Food', 100)")
            _ = try await app.scalar(
                """
                INSERT INTO transactions (ledger_id, category_id, title, amount, note) SELECT 1, 1, 'purchase ' || i, 1, repeat('n', 150)
                FROM generate_series(1, 1500) AS i
                """)
            for path in ["/posts", "/transactions", "/db"] {
                let first = try await app.request("GET", path)
                let tag = try #require(first.header("ETag"), "\(path)")
                #expect(first.isChunked && tag.hasPrefix("W/\""), "\(path)")
                let again = try await app.request("GET", path, headers: [("If-None-Match", tag)])
                #expect(again.status == 304, "\(path)")
                #expect(again.header("ETag") == tag && again.body.isEmpty)
                #expect(again.header("X-Sync-Seq") == first.header("X-Sync-Seq"))
            }
            let tag = try #require(try await app.request("GET", "/posts").header("ETag"))
            let created = try await app.request("POST", "/posts", json: #"{"title":"one more"}"#)
            #expect(created.status == 201)
            let changed = try await app.request("GET", "/posts", headers: [("If-None-Match", tag)])
            #expect(changed.status == 200, "a write changes the tag even before the feed stamps it")
            #expect(changed.header("ETag") != tag)
            let typedTag = try #require(try await app.request("GET", "/transactions").header("ETag"))
            _ = try await app.request("PATCH", "/transactions/7", json: #"{"title":"changed"}"#)
            #expect(try await app.request("GET", "/transactions", headers: [("If-None-Match", typedTag)]).status == 200)
        }
    }

    /// `--max-rows` cuts every list; where it cuts, `Link` leads to the rest, and a page larger than the cap
    /// shrinks to it with links that stay consistent.
    @Test func maxRowsCutsListsAndLinksToTheRest() async throws {
        var options = BudgetApp.Options()
        options.maxRows = 3
        try await TestApp.with(options: options) { app in
            try await Self.addPosts(app, count: 10, size: 10)
            var path: String? = "/posts"
            var ids: [Int] = []
            var answers = 0
            while let next = path, answers < 10 {
                let answer = try await app.request("GET", next)
                answers += 1
                #expect(answer.status == 200, "\(next): \(answer.text)")
                #expect(answer.header("X-Total-Count") == "10")
                let records = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [[String: Any]], "\(answer.text)")
                #expect(records.count <= 3)
                ids += records.compactMap { $0["id"] as? Int }
                path = answer.header("Link").flatMap(Self.nextPath)
            }
            #expect(ids == Array(1...10), "following rel=next from a cut list gives every record once, in order")
            #expect(answers == 4)
            let page = try await app.request("GET", "/posts?_page=2&_limit=5")
            #expect((try JSONSerialization.jsonObject(with: Data(page.body)) as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [4, 5, 6])
            let pageNext = try #require(page.header("Link").flatMap(Self.nextPath))
            let third = try await app.request("GET", pageNext)
            #expect((try JSONSerialization.jsonObject(with: Data(third.body)) as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [7, 8, 9])
            let envelope = try await app.request("GET", "/posts?_per_page=5")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(envelope.body)) as? [String: Any])
            #expect(object["pages"] as? Int == 4 && (object["data"] as? [Any])?.count == 3)
            _ = try await app.scalar("INSERT INTO categories (ledger_id, title, amount) SELECT 1, 'c' || i, 1 FROM generate_series(1, 5) AS i")
            let typed = try await app.request("GET", "/categories")
            #expect((try JSONSerialization.jsonObject(with: Data(typed.body)) as? [Any])?.count == 3)
            #expect(typed.header("Link") == #"<http://localhost/categories?_start=3>; rel="next""#)
        }
    }

    /// The path and query of `Link`'s `rel="next"`.
    static func nextPath(_ link: String) -> String? {
        for part in link.split(separator: ",") where part.contains(#"rel="next""#) {
            guard let start = part.firstIndex(of: "<"), let end = part.firstIndex(of: ">") else { return nil }
            let url = String(part[part.index(after: start)..<end])
            return url.replacingOccurrences(of: "http://localhost", with: "")
        }
        return nil
    }

    /// A PostgreSQL failure after the first chunk ends the answer without its last chunk: the client sees an
    /// incomplete body, never a complete but short list (docs/api.md, Large answers).
    @Test func aDatabaseFailureHalfWayEndsTheAnswerIncomplete() async throws {
        try await TestApp.with { app in
            let (client, head) = try await Self.openLargeList(app)
            try await waitUntil("the list's statement is reading") {
                try await app.scalar(Self.streamingBackends("count(*)")) == "1"
            }
            #expect(try await app.scalar(Self.streamingBackends("count(pg_terminate_backend(pid))")) == "1")
            let outcome = try await runOffCooperativePool { Result { try client.client.readChunkedBody(of: head) } }
            guard case .failure(TestClient.Failure.incompleteChunkedBody(_, let received)) = outcome else {
                Issue.record("expected an incomplete body, got \(outcome)")
                return
            }
            #expect(received.count < 30_000 * 1000)
            #expect((try? JSONSerialization.jsonObject(with: Data(received))) == nil, "what arrived is not a complete JSON document")
            // The stream pool replaces the lost connection: the next list is answered.
            let next = try await app.request("GET", "/posts?_limit=1")
            #expect(next.status == 200, "\(next.text)")
        }
    }

    /// A client that disconnects mid-answer frees its stream connection and its transaction at once: the pool's
    /// gauge shows it, and PostgreSQL holds no transaction open for it.
    @Test func aClientThatLeavesFreesItsStatement() async throws {
        try await TestApp.with { app in
            let (client, _) = try await Self.openLargeList(app)
            #expect(app.streamPool.statistics.inUse == 1)
            let gauge = try await Self.streamGauge(app)
            #expect(gauge == "1.0")
            // The stream's own session, by its pid: the schedule poster and the sequencer open short
            // transactions of their own on the database at any moment.
            try await waitUntil("the list's statement is reading") {
                try await app.scalar(Self.streamingBackends("count(*)")) == "1"
            }
            let pid = try #require(try await app.scalar(Self.streamingBackends("min(pid)")))
            #expect(try await app.scalar(Self.openTransactions(pid: pid)) == "1")
            try await runOffCooperativePool { client.client.close() }
            try await waitUntil("the stream's connection goes back to its pool") { app.streamPool.statistics.inUse == 0 }
            try await waitUntil("its transaction ends") { try await app.scalar(Self.openTransactions(pid: pid)) == "0" }
            let after = try await Self.streamGauge(app)
            #expect(after == "0.0")
        }
    }

    /// Adds about 31 MB of posts, far more than the kernel's socket buffers hold, and asks for all of them on a
    /// client that reads the head and stops: the server is then still reading rows, and holding its cursor.
    static func openLargeList(_ app: TestApp) async throws -> (client: ClientBox, head: TestResponse) {
        try await addPosts(app, count: 30_000)
        let client = try await runOffCooperativePool { try ClientBox(port: app.port) }
        let head = try await runOffCooperativePool {
            try client.client.send("GET /posts HTTP/1.1\r\nHost: localhost\r\n\r\n")
            return try client.client.readHead()
        }
        #expect(head.status == 200 && head.isChunked)
        return (client, head)
    }

    /// Backends of the app's database whose last statement is a list's FETCH, selected as `what`.
    static func streamingBackends(_ what: String) -> String {
        "SELECT \(what) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'FETCH %' AND pid <> pg_backend_pid()"
    }

    /// Whether the session `pid` holds a transaction open on the app's database, idle or running a statement:
    /// "1" or "0".
    static func openTransactions(pid: String) -> String {
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND xact_start IS NOT NULL AND pid = \(Int(pid) ?? 0)"
    }

    /// `db_stream_pool_connections_in_use` from `/metrics`.
    static func streamGauge(_ app: TestApp) async throws -> String? {
        let lines = try await app.request("GET", "/metrics").text.split(separator: "\n")
        return lines.first { $0.hasPrefix("db_stream_pool_connections_in_use ") }.map { String($0.split(separator: " ")[1]) }
    }
}

/// A `TestClient` handed from one `runOffCooperativePool` call to the next; each use is awaited before the next.
final class ClientBox: @unchecked Sendable {
    let client: TestClient
    init(port: Int) throws { client = try TestClient(port: port) }
}
