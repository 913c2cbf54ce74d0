import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

/// ETags, `If-None-Match` and `If-Match` (docs/sync.md, RFC 9110 §13) on typed and generic records and lists.
@Suite struct ConditionalRequestTests {
    /// A typed and a generic record, each with a path to its record and a valid PATCH body.
    static let records: [(path: String, patch: String)] = [
        ("/categories/1", #"{"amount":"120.00"}"#),
        ("/notes/1", #"{"text":"changed"}"#),
    ]

    static func withRecords(_ body: (TestApp) async throws -> Void) async throws {
        var options = BudgetApp.Options()
        options.allowsReset = true
        try await TestApp.with(options: options, poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("PUT", "/db", json: #"{"notes":[{"id":1,"text":"a"}]}"#)
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            try await body(app)
        }
    }

    @Test(arguments: records)
    func aMatchingIfNoneMatchAnswers304WithoutABody(path: String, patch: String) async throws {
        try await Self.withRecords { app in
            let first = try await app.request("GET", path)
            let tag = try #require(first.header("ETag"))
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""), "a strong tag: \(tag)")
            let again = try await app.request("GET", path, headers: [("If-None-Match", tag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == tag)
            _ = try await app.request("PATCH", path, json: patch)
            let changed = try await app.request("GET", path, headers: [("If-None-Match", tag)])
            #expect(changed.status == 200)
            #expect(changed.header("ETag") != tag)
        }
    }

    @Test func listsHaveETagsThatFollowTheirContentAndTotal() async throws {
        try await Self.withRecords { app in
            let page = try await app.request("GET", "/categories?_page=1&_limit=1")
            let tag = try #require(page.header("ETag"))
            #expect(try await app.request("GET", "/categories?_page=1&_limit=1", headers: [("If-None-Match", tag)]).status == 304)
            // A second category leaves page 1 as it was but changes X-Total-Count, so it is another answer.
            _ = try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":"800.00"}"#)
            let grown = try await app.request("GET", "/categories?_page=1&_limit=1", headers: [("If-None-Match", tag)])
            #expect(grown.status == 200)
            #expect(grown.header("X-Total-Count") == "2")
        }
    }

    @Test(arguments: records)
    func aStaleIfMatchAnswers412AndChangesNothing(path: String, patch: String) async throws {
        try await Self.withRecords { app in
            let stale = try #require(try await app.request("GET", path).header("ETag"))
            let updated = try await app.request("PATCH", path, json: patch, headers: [("If-Match", stale)])
            #expect(updated.status == 200)
            let current = try #require(updated.header("ETag"))
            let bodyBefore = try await app.request("GET", path).text
            for (method, body) in [("PATCH", patch), ("PUT", #"{"title":"X","amount":"1.00","text":"x"}"#), ("DELETE", nil)] {
                let refused = try await app.request(method, path, json: body, headers: [("If-Match", stale)])
                #expect(refused.status == 412, "\(method): \(refused.text)")
                #expect(refused.header("Content-Type") == "application/problem+json")
                #expect(refused.header("ETag") == current, "the 412 tells the current tag")
            }
            #expect(try await app.request("GET", path).text == bodyBefore)
            let deleted = try await app.request("DELETE", path, headers: [("If-Match", current)])
            #expect(deleted.status == 200)
        }
    }

    @Test func concurrentUpdatesWithTheSameIfMatchHaveExactlyOneWinner() async throws {
        try await Self.withRecords { app in
            let tag = try #require(try await app.request("GET", "/categories/1").header("ETag"))
            let writers = 8
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        try await app.request(
                            "PATCH", "/categories/1", json: #"{"amount":"\#(200 + writer).00"}"#, headers: [("If-Match", tag)]
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == 412 }.count == writers - 1, "\(statuses)")
            #expect(try await app.scalar("SELECT version FROM categories WHERE id = 1") == "2")
        }
    }

    @Test func ifNoneMatchStarOnPutCreatesOnlyWhatIsMissing() async throws {
        try await Self.withRecords { app in
            let body = #"{"title":"Offline","amount":"5.00"}"#
            let created = try await app.request("PUT", "/categories/40", json: body, headers: [("If-None-Match", "*")])
            #expect(created.status == 201)
            let again = try await app.request(
                "PUT", "/categories/40", json: #"{"title":"Other","amount":"6.00"}"#,
                headers: [("If-None-Match", "*")])
            #expect(again.status == 412)
            #expect(try await app.scalar("SELECT title FROM categories WHERE id = 40") == "Offline")
            let notes = try await app.request("PUT", "/notes/9", json: #"{"text":"new"}"#, headers: [("If-None-Match", "*")])
            #expect(notes.status == 201)
        }
    }

    @Test func ifMatchOnAMissingRecord() async throws {
        try await Self.withRecords { app in
            // A PATCH or DELETE of nothing is a 404 whatever the condition; a PUT would create, so the condition counts.
            #expect(try await app.request("PATCH", "/categories/99", json: #"{"amount":1}"#, headers: [("If-Match", "*")]).status == 404)
            #expect(try await app.request("DELETE", "/notes/99", headers: [("If-Match", #""abc""#)]).status == 404)
            let put = try await app.request("PUT", "/categories/99", json: #"{"title":"New","amount":1}"#, headers: [("If-Match", "*")])
            #expect(put.status == 412)
            #expect(try await app.scalar("SELECT count(*) FROM categories WHERE id = 99") == "0")
        }
    }

    @Test(arguments: ["abc", #""unterminated"#, #"W/"x", junk"#, ""])
    func aMalformedIfMatchIs400AndChangesNothing(value: String) async throws {
        try await Self.withRecords { app in
            let response = try await app.request("PATCH", "/categories/1", json: #"{"amount":"1.00"}"#, headers: [("If-Match", value)])
            #expect(response.status == 400, "\(value): \(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(try await app.scalar("SELECT version FROM categories WHERE id = 1") == "1")
        }
    }

    @Test func aWeakTagNeverSatisfiesIfMatch() async throws {
        try await Self.withRecords { app in
            let tag = try #require(try await app.request("GET", "/categories/1").header("ETag"))
            let response = try await app.request("PATCH", "/categories/1", json: #"{"amount":"1.00"}"#, headers: [("If-Match", "W/" + tag)])
            #expect(response.status == 412)
        }
    }

    @Test func writesAnswerTheNewRepresentationsTag() async throws {
        try await Self.withRecords { app in
            let updated = try await app.request("PATCH", "/categories/1", json: #"{"amount":"150.00"}"#)
            let read = try await app.request("GET", "/categories/1")
            #expect(updated.header("ETag") != nil)
            #expect(updated.header("ETag") == read.header("ETag"))
            let created = try await app.request("POST", "/notes", json: #"{"text":"b"}"#)
            let location = try #require(created.header("Location"))
            #expect(created.header("ETag") == (try await app.request("GET", location).header("ETag")))
        }
    }
}
