import BudgetAPI
import Foundation
import Testing
import APITestSupport

/// CORS, read-only mode and artificial delays: what client test suites point at (docs/json-server.md, docs/configuration.md).
@Suite struct MockRemoteTests {
    @Test func everyOriginIsEchoedWithExposedHeaders() async throws {
        try await TestApp.with { app in
            let response = try await app.request("GET", "/categories", headers: [("Origin", "http://localhost:5173")])
            #expect(response.header("Access-Control-Allow-Origin") == "http://localhost:5173")
            #expect(response.header("Vary")?.contains("Origin") == true)
            let exposed = response.header("Access-Control-Expose-Headers") ?? ""
            for name in ["X-Total-Count", "Link", "Location", "ETag", "X-Sync-Seq"] {
                #expect(exposed.contains(name))
            }
            let problem = try await app.request("GET", "/categories/9", headers: [("Origin", "http://app.test")])
            #expect(problem.status == 404)
            #expect(problem.header("Access-Control-Allow-Origin") == "http://app.test")
        }
    }

    @Test func everyAnswerExposesItsHeadersIsDatedAndAsksCachesToRevalidate() async throws {
        try await TestApp.with { app in
            let created = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"10.00"}"#)
            #expect(created.status == 201)
            let answers = [
                created, try await app.request("GET", "/categories"), try await app.request("GET", "/categories/999"),
                try await app.request("GET", "/health"),
            ]
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            formatter.timeZone = TimeZone(identifier: "GMT")
            for response in answers {
                // Without an Origin too: a cache in front may hand the answer to a browser that sent one.
                #expect(
                    response.header("Access-Control-Expose-Headers")
                        == "X-Total-Count, Link, Location, Content-Location, ETag, X-Sync-Seq, Idempotent-Replayed, Retry-After")
                #expect(response.header("Cache-Control") == "no-cache")
                #expect(response.header("Pragma") == "no-cache")
                #expect(response.header("Expires") == "-1")
                let date = try #require(response.header("Date").flatMap(formatter.date(from:)), "\(response.status)")
                #expect(abs(date.timeIntervalSinceNow) < 120)
            }
        }
    }

    @Test func preflightAnswers204WithTheRequestedHeaders() async throws {
        try await TestApp.with { app in
            let response = try await app.request(
                "OPTIONS", "/categories/1",
                headers: [
                    ("Origin", "http://app.test"),
                    ("Access-Control-Request-Method", "PATCH"),
                    ("Access-Control-Request-Headers", "content-type, idempotency-key"),
                ])
            #expect(response.status == 204)
            #expect(response.header("Access-Control-Allow-Origin") == "http://app.test")
            #expect(response.header("Access-Control-Allow-Methods")?.contains("PATCH") == true)
            #expect(response.header("Access-Control-Allow-Headers") == "content-type, idempotency-key")
        }
    }

    @Test func corsOriginRestrictsWhoMayRead() async throws {
        var options = BudgetApp.Options()
        options.corsOrigins = ["https://allowed.test"]
        try await TestApp.with(options: options) { app in
            let allowed = try await app.request("GET", "/categories", headers: [("Origin", "https://allowed.test")])
            #expect(allowed.header("Access-Control-Allow-Origin") == "https://allowed.test")
            let other = try await app.request("GET", "/categories", headers: [("Origin", "https://evil.test")])
            #expect(other.status == 200)
            #expect(other.header("Access-Control-Allow-Origin") == nil)
            let preflight = try await app.request(
                "OPTIONS", "/categories",
                headers: [
                    ("Origin", "https://evil.test"), ("Access-Control-Request-Method", "POST"),
                ])
            #expect(preflight.header("Access-Control-Allow-Origin") == nil)
            #expect(preflight.header("Access-Control-Allow-Methods") == nil)
        }
    }

    @Test func readOnlyRefusesWritesButServesReadsAndPreflights() async throws {
        var options = BudgetApp.Options()
        options.isReadOnly = true
        try await TestApp.with(options: options) { app in
            for method in ["POST", "PUT", "PATCH", "DELETE"] {
                let response = try await app.request(method, method == "POST" ? "/categories" : "/categories/1", json: #"{"title":"x","amount":1}"#)
                #expect(response.status == 403)
                #expect(response.header("Content-Type") == "application/problem+json")
            }
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
            #expect(try await app.request("GET", "/categories").status == 200)
            let preflight = try await app.request(
                "OPTIONS", "/categories",
                headers: [
                    ("Origin", "http://app.test"), ("Access-Control-Request-Method", "GET"),
                ])
            #expect(preflight.status == 204)
        }
    }

    @Test func delayHoldsTheAnswer() async throws {
        try await TestApp.with { app in
            let clock = ContinuousClock()
            let started = clock.now
            let response = try await app.request("GET", "/health?_delay=300")
            #expect(response.status == 200)
            // A lower bound only: the delay must have happened; how much longer it took is not our business.
            #expect(clock.now - started >= .milliseconds(300))
            let notANumber = try await app.request("GET", "/health?_delay=abc")
            #expect(notANumber.status == 400)
            let tooLong = try await app.request("GET", "/health?_delay=10001")
            #expect(tooLong.status == 400)
        }
    }

    @Test func serverWideDelayAppliesToEveryAnswer() async throws {
        var options = BudgetApp.Options()
        options.delay = .milliseconds(200)
        try await TestApp.with(options: options) { app in
            let clock = ContinuousClock()
            let started = clock.now
            let response = try await app.request("GET", "/health")
            #expect(response.status == 200)
            #expect(clock.now - started >= .milliseconds(200))
        }
    }
}
