import Foundation
import Testing
import TestSupport
import APITestSupport

/// Typed answers and the change feed are written in Swift from plain columns (docs/architecture.md); `_embed`,
/// `_expand` and export still render records in SQL. Both must give clients the same bytes, escapes and
/// whole-second timestamps included.
@Suite struct PlainRenderingTests {
    /// A note with everything PostgreSQL's `to_json` escapes, and UTF-8 it passes through.
    static let note = #"say \"hi\" \\ back\nline\ttab \b\f\u0001 \u001f café 😀 </script>"#

    /// The feed's `data` is the record's last member, so its exact bytes stand between `"data":` and `}`.
    static func feedShows(_ record: [UInt8], in feed: TestResponse) -> Bool {
        feed.text.contains(#""data":"# + String(decoding: record, as: UTF8.self) + "}")
    }

    @Test func recordsReadAsTheChangeFeedRendersThem() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Café \"Zürich\"\n","amount":"100.00"}"#)
            let posted = try await app.request(
                "POST", "/transactions", json: #"{"categoryId":1,"title":"Bread","amount":"2.50","date":"2026-01-02","note":"\#(Self.note)"}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"Milk","amount":"0.99"}"#)
            #expect(posted.status == 201, "\(posted.text)")
            // Timestamps are whole seconds (docs/api.md): the fraction is cut, not rounded, as to_char's SS does.
            for table in ["categories", "transactions"] {
                _ = try await app.scalar(
                    """
                    UPDATE \(table) SET created_at = '2026-01-02 03:04:05.999999+00', updated_at = '2026-01-02 03:04:05+00' \
                    WHERE id = 1 RETURNING id
                    """)
            }
            // to_char answers NULL for infinity.
            _ = try await app.scalar(
                "UPDATE transactions SET created_at = '2026-01-02 03:04:05.1+00', updated_at = 'infinity' WHERE id = 2 RETURNING id")

            let category = try await app.request("GET", "/categories/1")
            let bread = try await app.request("GET", "/transactions/1")
            let milk = try await app.request("GET", "/transactions/2")
            let feed = try await app.request("GET", "/changes")
            for record in [category, bread, milk] {
                #expect(record.status == 200)
                #expect(Self.feedShows(record.body, in: feed), "\(record.text) not in \(feed.text)")
            }
            #expect(
                category.text == #"""
                    {"id":1,"title":"Café \"Zürich\"\n","amount":100.00,"rollover":false,"spent":3.49,"remaining":96.51,\#
                    "createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z","version":1}
                    """#)
            #expect(
                bread.text.hasSuffix(
                    #""note":"\#(Self.note)","importId":null,"accountId":null,"cleared":"uncleared","payee":null,"transferId":null,"parentId":null,"splits":null,"createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z","version":1}"#
                ))
            #expect(
                milk.text.contains(
                    #""note":null,"importId":null,"accountId":null,"cleared":"uncleared","payee":null,"transferId":null,"parentId":null,"splits":null,"createdAt":"2026-01-02T03:04:05Z","updatedAt":null,"#
                ))
            // _expand and _embed render in SQL (SQLFragments.timestamp): the same bytes.
            let expanded = try await app.request("GET", "/transactions/1?_expand=category")
            #expect(expanded.text == String(bread.text.dropLast()) + #","category":\#(category.text)}"#, "\(expanded.text)")
            let embedded = try await app.request("GET", "/categories/1?_embed=transactions")
            #expect(embedded.text.hasPrefix(String(category.text.dropLast()) + #","transactions":["# + bread.text + ","), "\(embedded.text)")

            // Lists and write answers render the same records the same way.
            let records = { (parts: [TestResponse]) in "[" + parts.map(\.text).joined(separator: ",") + "]" }
            #expect(try await app.request("GET", "/transactions").text == records([bread, milk]))
            #expect(try await app.request("GET", "/categories").text == records([category]))
            #expect(try await app.request("GET", "/categories/1/transactions?_sort=-id&_page=1&_limit=1").text == records([milk]))
            #expect(try await app.request("GET", "/transactions?_per_page=1&_page=2").text.hasSuffix(#""data":\#(records([milk]))}"#))
            #expect(try await app.request("GET", "/categories/1/transactions?title=None").text == "[]")
            let patched = try await app.request("PATCH", "/transactions/2", json: #"{"note":"x"}"#)
            #expect(patched.text == (try await app.request("GET", "/transactions/2")).text)
            let deleted = try await app.request("DELETE", "/transactions/1")
            #expect(deleted.text == bread.text)
        }
    }
}
