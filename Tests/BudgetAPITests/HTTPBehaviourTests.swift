import Foundation
import HTTPServer
import Postgres
import Testing
import TestSupport
import APITestSupport

/// Statuses of docs/api.md (Errors) as the budget API answers them, over a real socket.
@Suite struct HTTPBehaviourTests {
    @Test(
        arguments: [
            ("POST", "/categories", "{\"title\":", 400),
            ("POST", "/categories", "3", 400),
            ("POST", "/categories", "[]", 400),
            ("POST", "/categories", "[1]", 400),
            ("PATCH", "/categories/1", "[{\"title\":\"x\"}]", 400),
            ("PUT", "/categories/1", "\"text\"", 400),
            ("GET", "/categories/abc", nil, 400),
            ("GET", "/categories/0", nil, 400),
            ("GET", "/categories/99999999999999999999", nil, 400),
            ("GET", "/nowhere", nil, 404),
            ("GET", "/categories/5", nil, 404),
            ("GET", "/transactions/5", nil, 404),
        ] as [(String, String, String?, Int)])
    func malformedRequestsGetProblems(method: String, path: String, body: String?, status: Int) async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Keep","amount":1}"#)
            let response = try await app.request(method, path, json: body)
            #expect(response.status == status)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.object["status"] as? Int == status)
            #expect(try await app.scalar("SELECT title || version FROM categories") == "Keep1")
        }
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        try await TestApp.with { app in
            let response = try await app.request("DELETE", "/categories")
            #expect(response.status == 405)
            let allowed = Set((response.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(allowed.isSuperset(of: ["GET", "POST"]))
            #expect(!allowed.contains("DELETE"))
        }
    }

    @Test func bodiesThatAreNotJSONAre415AndChangeNothing() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Keep","amount":1}"#)
            let put = try await app.request("PUT", "/categories/1", json: #"{"title":"Wiped","amount":0}"#, headers: [("Content-Type", "text/plain")])
            #expect(put.status == 415)
            let post = try await app.request(
                "POST", "/categories", json: #"{"title":"New","amount":0}"#, headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(post.status == 415)
            let mergeOnPost = try await app.request(
                "POST", "/categories", json: #"{"title":"New","amount":0}"#, headers: [("Content-Type", "application/merge-patch+json")])
            #expect(mergeOnPost.status == 415)
            #expect(try await app.scalar("SELECT title FROM categories") == "Keep")
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "1")
        }
    }

    @Test func contentTypeParametersAreAllowed() async throws {
        try await TestApp.with { app in
            let response = try await app.request(
                "POST", "/categories", json: #"{"title":"A","amount":1}"#, headers: [("Content-Type", "application/json; charset=utf-8")])
            #expect(response.status == 201)
        }
    }

    @Test func headAnswersHeadersWithoutBody() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            let get = try await app.request("GET", "/categories")
            let head = try await app.request("HEAD", "/categories")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == String(get.body.count))
        }
    }

    @Test func requestIDIsEchoedOrGenerated() async throws {
        try await TestApp.with { app in
            let echoed = try await app.request("GET", "/health", headers: [("X-Request-Id", "abc-123")])
            #expect(echoed.header("X-Request-Id") == "abc-123")
            let generated = try await app.request("GET", "/health")
            #expect((generated.header("X-Request-Id") ?? "").isEmpty == false)
        }
    }

    @Test func oversizedBodyIs413AndWritesNothing() async throws {
        try await TestApp.with { app in
            let title = String(repeating: "x", count: 1024 * 1024)
            let response = try await app.request("POST", "/categories", json: #"{"title":"\#(title)","amount":1}"#)
            #expect(response.status == 413)
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
        }
    }

    @Test func aRequestCutOffHalfWayWritesNothing() async throws {
        try await TestApp.with { app in
            let body = #"{"title":"Half","amount":1}"#
            try await runOffCooperativePool { [port = app.port] in
                let client = try TestClient(port: port)
                try client.send(
                    "POST /categories HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                        + body.prefix(10))
                client.close()
            }
            // A later request on another connection is answered, and the half request left no trace.
            #expect(try await app.request("GET", "/categories").text == "[]")
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
        }
    }

    @Test func healthAndReady() async throws {
        try await TestApp.with { app in
            let health = try await app.request("GET", "/health")
            #expect(health.status == 200)
            #expect(health.object["status"] as? String == "ok")
            // Tagged once at start-up, with the tag the middleware gives any answer of these bytes.
            let tag = EntityTag.strong(body: Array(#"{"status":"ok"}"#.utf8)[...], headerValues: [[String]()])  // no X-Total-Count
            #expect(health.header("ETag") == tag.headerValue)
            let unchanged = try await app.request("GET", "/health", headers: [("If-None-Match", health.header("ETag") ?? "")])
            #expect(unchanged.status == 304)
            let ready = try await app.request("GET", "/ready")
            #expect(ready.status == 200)
            #expect(ready.object["status"] as? String == "ready")
        }
    }

    @Test func unreachableDatabaseIs503WithRetryAfterWhileHealthStaysUp() async throws {
        let nowhere = "postgresql:///budget?host=/nonexistent-\(UUID().uuidString.prefix(8))&user=postgres&connect_timeout=1"
        try await TestApp.with(
            databaseURL: nowhere,
            poolConfiguration: {
                PoolConfiguration(url: $0, size: 2, checkoutTimeout: .seconds(2))
            }
        ) { app in
            // The client gives up after 10 s, so a hanging request fails here rather than passing late.
            let response = try await app.request("GET", "/categories")
            #expect(response.status == 503)
            #expect(response.header("Retry-After") != nil)
            #expect(!response.text.contains("nonexistent"))
            #expect(try await app.request("GET", "/ready").status == 503)
            #expect(try await app.request("GET", "/health").status == 200)
        }
    }

    @Test func keepAliveServesManyRequestsOnOneConnection() async throws {
        try await TestApp.with { app in
            let responses = try await runOffCooperativePool { [port = app.port] in
                let client = try TestClient(port: port)
                defer { client.close() }
                var responses = try (1...5).map { index in
                    try client.request("POST", "/categories", json: #"{"title":"C\#(index)","amount":\#(index)}"#)
                }
                responses.append(try client.request("GET", "/categories"))
                return responses
            }
            #expect(responses.prefix(5).map(\.status) == [201, 201, 201, 201, 201])
            #expect(responses.last?.array.count == 5)
        }
    }
}

/// A statement cut off by `statement_timeout` (issue #6: every query runs under one) is a 503, not a 500.
@Suite struct StatementTimeoutTests {
    @Test func aQueryOverTheStatementTimeoutIs503WithRetryAfter() async throws {
        // 20,000 rows cannot be rendered as JSON within 1 ms, however fast the machine.
        try await TestApp.with(poolConfiguration: {
            PoolConfiguration(url: $0, size: 2, checkoutTimeout: .seconds(30), statementTimeout: .milliseconds(1))
        }) { app in
            _ = try await app.scalar(
                """
                WITH c AS (INSERT INTO categories (ledger_id, id, title, amount) VALUES (1, 1, 'Big', 1) RETURNING id)
                INSERT INTO transactions (ledger_id, category_id, title, amount) SELECT 1, 1, 't' || g, 1 FROM c, generate_series(1, 20000) g RETURNING 1
                """)
            let response = try await app.request("GET", "/transactions")
            #expect(response.status == 503, "\(response.text.prefix(200))")
            #expect(response.header("Retry-After") == "1")
            #expect(response.header("Content-Type") == "application/problem+json")
        }
    }
}
