import Foundation
import Testing
import TestSupport
import APITestSupport

/// A header value a client percent-encoded (`If-Match: %22…%22`, as swift-openapi-generator's runtime sends it)
/// is a 400 that names the cause and points at docs/clients.md, and changes nothing (docs/clients.md).
@Suite struct PercentEncodedHeaderTests {
    static func withCategory(_ body: (TestApp, _ etag: String) async throws -> Void) async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let created = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.00"}"#)
            try await body(app, try #require(created.header("ETag")))
        }
    }

    static func expectCauseNamed(_ response: TestResponse, header: String) throws {
        #expect(response.status == 400, "\(header): \(response.text)")
        #expect(response.header("Content-Type") == "application/problem+json")
        let problem = try #require(try response.json() as? [String: Any])
        let detail = try #require(problem["detail"] as? String)
        #expect(detail.contains("\(header) header's value starts with %22"), "\(detail)")
        #expect(detail.contains("percent-encoded the header value"), "\(detail)")
        #expect(detail.contains("docs/clients.md"), "\(detail)")
        let errors = try #require(problem["errors"] as? [[String: Any]])
        #expect(errors.map { $0["field"] as? String } == [header])
    }

    static func encoded(_ value: String) -> String {
        value.replacingOccurrences(of: "\"", with: "%22")
    }

    @Test(arguments: ["PATCH", "PUT", "DELETE"])
    func anEncodedIfMatchIs400AndChangesNothing(method: String) async throws {
        try await Self.withCategory { app, etag in
            let body = method == "DELETE" ? nil : #"{"title":"Food","amount":"5.00"}"#
            let response = try await app.request(method, "/categories/1", json: body, headers: [("If-Match", Self.encoded(etag))])
            try Self.expectCauseNamed(response, header: "If-Match")
            #expect(try await app.scalar("SELECT version FROM categories WHERE id = 1") == "1")
            // The same tag, sent as the server wrote it, holds.
            let plain = try await app.request(method, "/categories/1", json: body, headers: [("If-Match", etag)])
            #expect(plain.status == 200, "\(plain.text)")
        }
    }

    @Test func anEncodedIfNoneMatchIs400OnReadsAndWrites() async throws {
        try await Self.withCategory { app, etag in
            let read = try await app.request("GET", "/categories/1", headers: [("If-None-Match", Self.encoded(etag))])
            try Self.expectCauseNamed(read, header: "If-None-Match")
            let list = try await app.request("HEAD", "/categories", headers: [("If-None-Match", " " + Self.encoded(etag))])
            #expect(list.status == 400)
            let write = try await app.request(
                "PUT", "/categories/2", json: #"{"title":"Rent","amount":"9.00"}"#, headers: [("If-None-Match", "%22*%22")])
            try Self.expectCauseNamed(write, header: "If-None-Match")
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "1")
            // Sent as the server wrote it, the tag still revalidates.
            #expect(try await app.request("GET", "/categories/1", headers: [("If-None-Match", etag)]).status == 304)
        }
    }

    /// `%22k-1%22` was a bare key other than `"k-1"`, so a retry with the quotes wrote a second time.
    @Test func anEncodedIdempotencyKeyIs400AndWritesNothing() async throws {
        try await Self.withCategory { app, _ in
            let body = #"{"categoryId":1,"title":"Milk","amount":"3.49"}"#
            let response = try await app.request("POST", "/transactions", json: body, headers: [("Idempotency-Key", "%22k-1%22")])
            try Self.expectCauseNamed(response, header: "Idempotency-Key")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
            #expect(try await app.scalar("SELECT count(*) FROM idempotency_keys") == "0")
            let first = try await app.request("POST", "/transactions", json: body, headers: [("Idempotency-Key", #""k-1""#)])
            let retry = try await app.request("POST", "/transactions", json: body, headers: [("Idempotency-Key", #""k-1""#)])
            #expect(first.status == 201 && retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == "true")
            // A bare key may hold a percent sign elsewhere.
            let other = try await app.request("POST", "/transactions", json: body, headers: [("Idempotency-Key", "%2Fk-2")])
            #expect(other.status == 201, "\(other.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "2")
        }
    }
}
