import Foundation
import Testing
import TestSupport

/// Two `budget-server` processes on one database, as replicas behind a load balancer run
/// (docs/operations.md, Deployment): whatever one answers, the other agrees with, and the guarantees that
/// rest on PostgreSQL (idempotency keys, ETags, the change feed's NOTIFY) hold across them.
///
/// Every wait is a condition with a bound; where timing could pick between two answers, the test holds
/// a database lock so that only one is possible.
@Suite(.serialized) struct ReplicaTests {
    /// Runs `body` with two servers on one fresh database; the second trusts a proxy, the first does not.
    static func withReplicas(_ body: (_ a: ServerProcess, _ b: ServerProcess, _ url: String) async throws -> Void) async throws {
        let url = try await TestDatabase.fresh()
        let a = try await ServerProcess.start(["--database-url", url])
        let b = try await ServerProcess.start(["--database-url", url, "--trust-proxy"])
        try await body(a, b, url)
    }

    static func count(_ url: String, _ table: String) async throws -> String? {
        try await GapProof.scalar(url, "SELECT count(*) FROM \(table)")
    }

    @Test func writesOnOneAreWhatTheOtherReads() async throws {
        try await Self.withReplicas { a, b, _ in
            let created = try await a.request("POST", "/categories", json: #"{"title":"Food","amount":100}"#)
            #expect(created.status == 201)
            let id = try #require(created.recordID)
            let onA = try await a.request("GET", "/categories/\(id)")
            let onB = try await b.request("GET", "/categories/\(id)")
            #expect(onB.status == 200)
            #expect(onB.body == onA.body)
            #expect(onB.header("ETag") == onA.header("ETag"))

            let spent = try await b.request("POST", "/categories/\(id)/transactions", json: #"{"title":"Milk","amount":2.5}"#)
            #expect(spent.status == 201)
            #expect(try await a.request("GET", "/categories/\(id)").text.contains(#""spent":2.50,"remaining":97.50"#))
            #expect(try await a.request("GET", "/categories/\(id)/transactions").array.map { $0["title"] as? String } == ["Milk"])

            #expect(try await b.request("DELETE", "/categories/\(id)").status == 200)
            #expect(try await a.request("GET", "/categories/\(id)").status == 404)
        }
    }

    @Test func aLongPollOnOneWakesForAWriteOnTheOther() async throws {
        try await Self.withReplicas { a, b, _ in
            let since = try await GapProof.changes(b, since: 0).lastSeq
            let started = ContinuousClock.now
            // 60 s is the longest wait; an answer without the change would mean B never heard of A's write.
            async let poll = b.request("GET", "/changes?since=\(since)&wait=60", timeout: .seconds(90))
            try await waitUntil("B's long-poll is waiting") { try await Self.longPollWaiters(b) == 1 }
            let created = try await a.request("POST", "/categories", json: #"{"title":"Rent","amount":900}"#)
            #expect(created.status == 201)
            let answer = try await poll
            #expect(answer.status == 200)
            let changes = answer.object["changes"] as? [[String: Any]] ?? []
            #expect(changes.map { $0["collection"] as? String } == ["categories"], "\(answer.text)")
            #expect(changes.map { ($0["id"] as? NSNumber)?.int64Value } == [created.recordID])
            #expect(ContinuousClock.now - started < .seconds(30), "woken by the write, not by the end of the wait")
        }
    }

    /// `changes_long_poll_waiters` from the server's `/metrics`.
    static func longPollWaiters(_ server: ServerProcess) async throws -> Double? {
        let metrics = try await server.request("GET", "/metrics")
        let line = metrics.text.split(separator: "\n").first { $0.hasPrefix("changes_long_poll_waiters ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test func aRetryOnTheOtherProcessReplaysTheFirstAnswer() async throws {
        try await Self.withReplicas { a, b, url in
            let key = [("Idempotency-Key", "retry-across-1")]
            let first = try await a.request("POST", "/categories", json: #"{"title":"Once","amount":5}"#, headers: key)
            #expect(first.status == 201)
            #expect(first.header("Idempotent-Replayed") == nil)
            let retry = try await b.request("POST", "/categories", json: #"{"title":"Once","amount":5}"#, headers: key)
            #expect(retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.body == first.body)
            #expect(retry.header("Location") == first.header("Location"))
            #expect(retry.header("ETag") == first.header("ETag"))
            // The same key with another body is a client error on either process.
            let other = try await b.request("POST", "/categories", json: #"{"title":"Twice","amount":5}"#, headers: key)
            #expect(other.status == 422)
            #expect(try await Self.count(url, "categories") == "1")
        }
    }

    /// The same key sent to both while the first is still running: the second gets 409 at once, never a
    /// second write; once the first commits, a retry anywhere replays it.
    @Test func theSameKeyOnBothAtOnceWritesOnce() async throws {
        try await Self.withReplicas { a, b, url in
            // Holding SHARE on categories stops A's INSERT after it claimed the key: A is "still running".
            let holder = try await HeldDatabaseSession.open(url)
            try await holder.execute("BEGIN; LOCK TABLE categories IN SHARE MODE")
            let key = [("Idempotency-Key", "both-at-once")]
            let body = #"{"title":"Contested","amount":7}"#
            async let onA = a.request("POST", "/categories", json: body, headers: key)
            try await waitUntil("A's INSERT waits for the lock, with the key claimed") {
                try await GapProof.scalar(
                    url,
                    """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO categories%'
                    """) == "1"
            }
            let onB = try await b.request("POST", "/categories", json: body, headers: key)
            #expect(onB.status == 409, "\(onB.text)")
            try await holder.execute("ROLLBACK")
            await holder.close()
            let first = try await onA
            #expect(first.status == 201)
            #expect(first.header("Idempotent-Replayed") == nil)
            let retry = try await b.request("POST", "/categories", json: body, headers: key)
            #expect(retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.body == first.body)
            #expect(try await Self.count(url, "categories") == "1")
        }
    }

    @Test func anETagFromOneIsJudgedByTheOther() async throws {
        try await Self.withReplicas { a, b, url in
            let created = try await a.request("POST", "/categories", json: #"{"title":"Tagged","amount":10}"#)
            let path = "/categories/\(try #require(created.recordID))"
            let tag = try #require(try await a.request("GET", path).header("ETag"))
            #expect(try await b.request("GET", path, headers: [("If-None-Match", tag)]).status == 304)

            let updated = try await b.request("PATCH", path, json: #"{"amount":11}"#, headers: [("If-Match", tag)])
            #expect(updated.status == 200)
            let newTag = try #require(updated.header("ETag"))
            #expect(newTag != tag)
            // A's client still holds the old tag: its write is refused, and nothing changes.
            let stale = try await a.request("PATCH", path, json: #"{"amount":99}"#, headers: [("If-Match", tag)])
            #expect(stale.status == 412)
            #expect(stale.header("ETag") == newTag)
            #expect(try await GapProof.scalar(url, "SELECT amount || ' v' || version FROM categories") == "11.00 v2")
            #expect(try await a.request("DELETE", path, headers: [("If-Match", newTag)]).status == 200)
        }
    }

    @Test func aBatchOnOneIsReadWholeOnTheOther() async throws {
        try await Self.withReplicas { a, b, _ in
            let since = try await GapProof.changes(b, since: 0).lastSeq
            let batch = try await a.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/categories","body":{"id":500,"title":"Trip","amount":300}},
                      {"method":"POST","path":"/categories/500/transactions","body":{"title":"Train","amount":45.5}},
                      {"method":"PATCH","path":"/categories/500","body":{"amount":350}}
                    ]}
                    """)
            #expect(batch.status == 200, "\(batch.text)")
            let category = try await b.request("GET", "/categories/500")
            #expect(category.text.contains(#""amount":350.00,"rollover":false,"spent":45.50,"remaining":304.50"#), "\(category.text)")
            #expect(category.object["version"] as? Int == 2)
            #expect(try await b.request("GET", "/categories/500/transactions").array.map { $0["title"] as? String } == ["Train"])
            // GET /changes catches the feed up before it answers (docs/sync.md), so both records are there, once.
            let changes = try await GapProof.changes(b, since: since).changes
            let kinds = changes.compactMap { $0["collection"] as? String }.sorted()
            #expect(kinds == ["categories", "transactions"])
        }
    }

    /// `--trust-proxy` reaches the process: B builds `Link` from the proxy's headers, A ignores them.
    @Test func onlyTheTrustingProcessBelievesTheProxy() async throws {
        try await Self.withReplicas { a, b, _ in
            for title in ["One", "Two"] {
                #expect(try await a.request("POST", "/categories", json: #"{"title":"\#(title)","amount":1}"#).status == 201)
            }
            let proxied = [("Host", "replica:3000"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "budget.example")]
            let onA = try await a.request("GET", "/categories?_page=1&_limit=1", headers: proxied)
            let onB = try await b.request("GET", "/categories?_page=1&_limit=1", headers: proxied)
            #expect(onA.header("Link")?.hasPrefix("<http://replica:3000/categories?_page=1&_limit=1>") == true)
            #expect(onB.header("Link")?.hasPrefix("<https://budget.example/categories?_page=1&_limit=1>") == true)
        }
    }
}
