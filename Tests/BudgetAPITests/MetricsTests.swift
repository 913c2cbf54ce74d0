import Foundation
import Synchronization
import Testing
import TestSupport
import APITestSupport

/// `GET /metrics` (docs/operations.md, Metrics): Prometheus text with requests by route template and status, latency, pool use.
///
/// Every app here has the small pool (two connections): the whole test run shares one PostgreSQL's
/// max_connections.
@Suite struct MetricsTests {
    /// The scrape's lines, without comments.
    func scrape(_ app: TestApp) async throws -> [String] {
        let response = try await app.request("GET", "/metrics")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        return response.text.split(separator: "\n").map(String.init)
    }

    /// The value of the sample named exactly `series` (name and labels), or nil.
    func value(_ series: String, in lines: [String]) -> String? {
        lines.first { $0.hasPrefix(series + " ") }.map { String($0.dropFirst(series.count + 1)) }
    }

    @Test func requestsAreCountedByRouteTemplateAndStatus() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":10}"#)
            _ = try await app.request("GET", "/categories/1")
            _ = try await app.request("GET", "/categories/1")
            _ = try await app.request("GET", "/categories/999")
            _ = try await app.request("HEAD", "/categories/1")
            _ = try await app.request("DELETE", "/categories")
            _ = try await app.request("GET", "/a/b/c/d")
            _ = try await app.request("BREW", "/categories")
            let batch = try await app.request(
                "POST", "/batch", json: #"{"operations":[{"method":"POST","path":"/categories","body":{"title":"Batched","amount":1}}]}"#
            )
            #expect(batch.status == 200)
            let lines = try await scrape(app)

            let total = "http_requests_total"
            #expect(value(#"\#(total){method="POST",route="/categories",status="201"}"#, in: lines) == "1")
            #expect(value(#"\#(total){method="GET",route="/categories/:id",status="200"}"#, in: lines) == "2")
            #expect(value(#"\#(total){method="GET",route="/categories/:id",status="404"}"#, in: lines) == "1")
            #expect(value(#"\#(total){method="HEAD",route="/categories/:id",status="200"}"#, in: lines) == "1")
            #expect(value(#"\#(total){method="DELETE",route="/categories",status="405"}"#, in: lines) == "1")
            #expect(value(#"\#(total){method="GET",route="unmatched",status="404"}"#, in: lines) == "1")
            #expect(value(#"\#(total){method="other",route="/categories",status="405"}"#, in: lines) == "1")
            // A batch is one request of its own; its operations (another POST /categories) are not requests.
            #expect(value(#"\#(total){method="POST",route="/batch",status="200"}"#, in: lines) == "1")
            // Never a raw path or a made-up method as a label value.
            #expect(!lines.contains { $0.contains("/categories/1\"") || $0.contains("/categories/999") || $0.contains("/a/b") })
            #expect(!lines.contains { $0.contains("BREW") })
        }
    }

    @Test func latencyIsAHistogramPerRoute() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.request("GET", "/categories")
            _ = try await app.request("GET", "/categories")
            let lines = try await scrape(app)
            let labels = #"method="GET",route="/categories""#
            #expect(lines.contains("# TYPE http_request_duration_seconds histogram"))
            for bucket in ["0.001", "0.005", "0.1", "1.0", "10.0", "60.0"] {
                #expect(value(#"http_request_duration_seconds_bucket{\#(labels),le="\#(bucket)"}"#, in: lines) != nil, "\(bucket)")
            }
            #expect(value(#"http_request_duration_seconds_bucket{\#(labels),le="+Inf"}"#, in: lines) == "2")
            #expect(value(#"http_request_duration_seconds_count{\#(labels)}"#, in: lines) == "2")
            let sum = value(#"http_request_duration_seconds_sum{\#(labels)}"#, in: lines).flatMap(Double.init)
            #expect((sum ?? -1) > 0)
            // The second scrape counts the first, and sees itself in flight.
            let again = try await scrape(app)
            #expect(value(#"http_requests_total{method="GET",route="/metrics",status="200"}"#, in: again) == "1")
            #expect(value("http_requests_in_flight", in: again) == "1.0")
        }
    }

    @Test func poolGaugesAreSampledAtScrape() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            // The schedule poster's run at start takes a pooled connection for a moment: the gauges are read after it.
            try await waitUntil("the poster's first run is over") {
                app.service.schedulePoster.completedRuns >= 1 && app.pool.statistics.inUse == 0
            }
            let lines = try await scrape(app)
            #expect(value("db_pool_connections", in: lines) == "2.0")
            #expect(value("db_pool_connections_in_use", in: lines) == "0.0")
            #expect(value("db_pool_waiting", in: lines) == "0.0")
            #expect(value("changes_long_poll_waiters", in: lines) == "0.0")

            // Hold one pooled connection (on a pool thread, where blocking is fine) until the scrape has seen it.
            let release = Release()
            let held = Task {
                try await app.pool.withConnection { _ in
                    // Bounded, so a test that never releases it cannot keep the pool's thread for good.
                    let deadline = ContinuousClock.now + .seconds(60)
                    while !release.isDone.load(ordering: .acquiring) && ContinuousClock.now < deadline { usleep(2_000) }
                }
            }
            do {
                try await waitUntil("a connection is in use") { app.pool.statistics.inUse == 1 }
                let busy = try await scrape(app)
                #expect(value("db_pool_connections_in_use", in: busy) == "1.0")
            } catch {
                release.isDone.store(true, ordering: .releasing)
                throw error
            }
            release.isDone.store(true, ordering: .releasing)
            try await held.value
        }
    }

    @Test func longPollWaitersAreSampledAtScrape() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            // The poll is answered only after the scrapes below and a write; its client waits for that far
            // longer than the 10 s that ran out (recv EAGAIN) on a loaded machine, and less than the wait.
            let answered = Mutex<TestResponse?>(nil)
            let polled = Task {
                let response = try await app.request("GET", "/changes?since=0&wait=60", timeout: .seconds(50))
                answered.withLock { $0 = response }
                return response
            }
            // The listener's first LISTEN wakes every waiter once to look again, so a waiter seen once may be
            // re-registering at the moment of a scrape: poll the scrape itself until it shows the one waiter.
            // The poll first waits for the sequencer, up to twice the pool's 30 s checkout: longer than 20 s.
            var lines: [String] = []
            try await waitUntil("a scrape shows the waiting long-poll", timeout: .seconds(90)) {
                if let early = answered.withLock({ $0 }) {
                    throw UnexpectedAnswer(description: "the long-poll was answered before it waited: \(early.status) \(early.text)")
                }
                lines = try await scrape(app)
                return value("changes_long_poll_waiters", in: lines) == "1.0"
            }
            // The poll and the scrape.
            #expect(value("http_requests_in_flight", in: lines) == "2.0")
            _ = try await app.request("POST", "/categories", json: #"{"title":"Wake","amount":1}"#)
            let response = try await polled.value
            #expect(response.status == 200, "\(response.text)")
            let after = try await scrape(app)
            #expect(value(#"http_requests_total{method="GET",route="/changes",status="200"}"#, in: after) == "1")
        }
    }
}

/// Tells a job holding a pooled connection to let it go.
private final class Release: Sendable {
    let isDone = Atomic(false)
}
