import BudgetAPI
import Foundation
import Postgres
import Testing
import TestSupport
import APITestSupport

extension TestApp {
    /// `SELECT count(*) FROM table`, as a number (-1 when the query answered nothing).
    func rowCount(of table: String) async throws -> Int {
        try await scalar("SELECT count(*) FROM \(table)").flatMap { Int($0) } ?? -1
    }

    /// How many records the change feed holds once every committed change is stamped: a write reaches
    /// `change_log` a sequencer run after its commit (docs/change-feed.md).
    func loggedRecordCount() async throws -> Int {
        _ = try await scalar("SELECT advance_change_feed(1000000)")
        return try await rowCount(of: "change_log")
    }
}

/// `Idempotency-Key` on writes (docs/sync.md): a retry replays the first answer; the key is stored in the
/// same transaction as the write; a reused key is 422, a running one 409, a malformed one 400.
@Suite struct IdempotencyTests {
    static let keyHeader = "Idempotency-Key"
    static let replayedHeader = "Idempotent-Replayed"

    /// Header names with their counts, leaving out the replay marker and what every answer carries anew.
    static func headerNames(_ response: TestResponse) -> [String: Int] {
        var names: [String: Int] = [:]
        for header in response.headers where !["date", "idempotent-replayed", "connection"].contains(header.name.lowercased()) {
            names[header.name.lowercased(), default: 0] += 1
        }
        return names
    }

    @Test func aRetryWithTheSameKeyAndBodyReplaysTheFirstAnswer() async throws {
        try await TestApp.with { app in
            let body = #"{"title":"Rent","amount":900}"#
            let key = [(Self.keyHeader, "create-rent-1")]
            let first = try await app.request("POST", "/categories", json: body, headers: key)
            #expect(first.status == 201, "\(first.text)")
            #expect(first.header(Self.replayedHeader) == nil)
            #expect(first.header("Location") == "/categories/1")

            let retry = try await app.request("POST", "/categories", json: body, headers: key)
            #expect(retry.status == 201)
            #expect(retry.header(Self.replayedHeader) == "true")
            #expect(retry.body == first.body, "\(retry.text) vs \(first.text)")
            #expect(retry.header("Location") == first.header("Location"))
            #expect(retry.header("ETag") == first.header("ETag"))
            #expect(retry.header("Content-Type") == first.header("Content-Type"))
            #expect(retry.object["id"] as? Int == 1)
            // The replay passes the outer middleware again: no header may come twice because it was stored too.
            #expect(Self.headerNames(retry) == Self.headerNames(first), "\(retry.headers) vs \(first.headers)")

            #expect(try await app.rowCount(of: "categories") == 1)
            #expect(try await app.loggedRecordCount() == 1)
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
            let stored = try await app.scalar("SELECT key || ' ' || method || ' ' || path || ' ' || status FROM idempotency_keys")
            #expect(stored == "create-rent-1 POST /categories 201")
            // A third retry still replays, and the record was written once.
            let third = try await app.request("POST", "/categories", json: body, headers: key)
            #expect(third.header(Self.replayedHeader) == "true")
            #expect(third.body == first.body)
            #expect(try await app.scalar("SELECT version FROM categories WHERE id = 1") == "1")
        }
    }

    @Test func aRetryRunsNothingOfTheWriteNotEvenItsId() async throws {
        try await TestApp.with { app in
            let key = [(Self.keyHeader, "once-only")]
            let first = try await app.request("POST", "/categories", json: #"{"title":"Once","amount":1}"#, headers: key)
            #expect(first.object["id"] as? Int == 1)
            let retry = try await app.request("POST", "/categories", json: #"{"title":"Once","amount":1}"#, headers: key)
            #expect(retry.header(Self.replayedHeader) == "true")
            let reused = try await app.request("POST", "/categories", json: #"{"title":"Other","amount":1}"#, headers: key)
            #expect(reused.status == 422)
            // The claim refused both before their INSERT ran (it is skipped, not rolled back): no id was drawn.
            let next = try await app.request("POST", "/categories", json: #"{"title":"Next","amount":1}"#)
            #expect(next.object["id"] as? Int == 2, "\(next.text)")
        }
    }

    @Test func aKeyedWriteToAGenericCollectionRunsOnceAndReplays() async throws {
        try await TestApp.with { app in
            // A generic collection's handler needs a blocking connection, so its transaction runs on the pool.
            try await app.seed(#"{"posts":[]}"#)
            let key = [(Self.keyHeader, "post-once")]
            let first = try await app.request("POST", "/posts", json: #"{"title":"Hello"}"#, headers: key)
            #expect(first.status == 201, "\(first.text)")
            #expect(first.header(Self.replayedHeader) == nil)
            let retry = try await app.request("POST", "/posts", json: #"{"title":"Hello"}"#, headers: key)
            #expect(retry.status == 201)
            #expect(retry.header(Self.replayedHeader) == "true")
            #expect(retry.body == first.body)
            #expect(try await app.rowCount(of: "documents") == 1)
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
        }
    }

    @Test func theBodyCountsInCompactFormAndAnotherRequestIs422() async throws {
        try await TestApp.with { app in
            let key = [(Self.keyHeader, "compact-1")]
            let first = try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":900}"#, headers: key)
            #expect(first.status == 201)

            let spaced = try await app.request("POST", "/categories", json: "{ \"title\" : \"Rent\",\n\t\"amount\": 900 }\n", headers: key)
            #expect(spaced.status == 201)
            #expect(spaced.header(Self.replayedHeader) == "true")
            #expect(spaced.body == first.body)

            let otherBody = try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":901}"#, headers: key)
            #expect(otherBody.status == 422, "\(otherBody.text)")
            #expect(otherBody.header("Content-Type") == "application/problem+json")
            #expect(otherBody.object["type"] as? String == "urn:budget-server:problem:idempotency-key-reused")
            #expect(otherBody.problemFields == [Self.keyHeader])
            #expect(otherBody.header(Self.replayedHeader) == nil)

            let otherPath = try await app.request("POST", "/transactions", json: #"{"title":"Rent","amount":900}"#, headers: key)
            #expect(otherPath.status == 422, "\(otherPath.text)")
            #expect(otherPath.object["type"] as? String == "urn:budget-server:problem:idempotency-key-reused")

            let otherMethod = try await app.request("PUT", "/categories/1", json: #"{"title":"Rent","amount":900}"#, headers: key)
            #expect(otherMethod.status == 422, "\(otherMethod.text)")
            #expect(otherMethod.object["type"] as? String == "urn:budget-server:problem:idempotency-key-reused")

            // Nothing of the refused requests was written, and the key still answers as the first time.
            #expect(try await app.rowCount(of: "categories") == 1)
            #expect(try await app.rowCount(of: "transactions") == 0)
            #expect(try await app.loggedRecordCount() == 1)
            #expect(try await app.scalar("SELECT amount FROM categories WHERE id = 1") == "900.00")
            #expect(try await app.scalar("SELECT version FROM categories WHERE id = 1") == "1")
            let again = try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":900}"#, headers: key)
            #expect(again.header(Self.replayedHeader) == "true")
            #expect(again.body == first.body)
        }
    }

    @Test func aFailedFirstRequestIsNotStoredSoTheKeyRunsAgain() async throws {
        try await TestApp.with { app in
            let key = [(Self.keyHeader, "fails-first")]
            let invalid = try await app.request("POST", "/categories", json: #"{"title":"","amount":1}"#, headers: key)
            #expect(invalid.status == 422)
            #expect(invalid.problemFields == ["title"])
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)

            let valid = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":1}"#, headers: key)
            #expect(valid.status == 201, "\(valid.text)")
            #expect(valid.header(Self.replayedHeader) == nil)
            #expect(try await app.rowCount(of: "categories") == 1)

            // A 404 is not stored either: once the record exists, the same key and body run.
            let patchKey = [(Self.keyHeader, "patch-missing")]
            let missing = try await app.request("PATCH", "/categories/7", json: #"{"amount":2}"#, headers: patchKey)
            #expect(missing.status == 404)
            let created = try await app.request("PUT", "/categories/7", json: #"{"title":"Later","amount":1}"#)
            #expect(created.status == 201)
            let patched = try await app.request("PATCH", "/categories/7", json: #"{"amount":2}"#, headers: patchKey)
            #expect(patched.status == 200, "\(patched.text)")
            #expect(patched.header(Self.replayedHeader) == nil)
            #expect(patched.object["version"] as? Int == 2)
            #expect(try await app.scalar("SELECT amount FROM categories WHERE id = 7") == "2.00")
            #expect(try await app.rowCount(of: "idempotency_keys") == 2)
        }
    }

    @Test func aQuotedKeyAndTheBareKeyAreTheSameKey() async throws {
        try await TestApp.with { app in
            let body = #"{"title":"Quoted","amount":1}"#
            let quoted = try await app.request("POST", "/categories", json: body, headers: [(Self.keyHeader, #""abc""#)])
            #expect(quoted.status == 201)
            let bare = try await app.request("POST", "/categories", json: body, headers: [(Self.keyHeader, "abc")])
            #expect(bare.status == 201)
            #expect(bare.header(Self.replayedHeader) == "true")
            #expect(bare.body == quoted.body)

            // An escaped quote inside a quoted key is the bare key's quote.
            let escaped = try await app.request(
                "POST", "/categories", json: #"{"title":"Escaped","amount":1}"#, headers: [(Self.keyHeader, #""a\"b""#)])
            #expect(escaped.status == 201)
            let bareQuote = try await app.request(
                "POST", "/categories", json: #"{"title":"Escaped","amount":1}"#, headers: [(Self.keyHeader, #"a"b"#)])
            #expect(bareQuote.header(Self.replayedHeader) == "true")
            #expect(bareQuote.body == escaped.body)

            // 255 characters is the longest key there is.
            let longest = String(repeating: "k", count: 255)
            let long = try await app.request("POST", "/categories", json: #"{"title":"Long","amount":1}"#, headers: [(Self.keyHeader, longest)])
            #expect(long.status == 201, "\(long.text)")

            #expect(try await app.rowCount(of: "categories") == 3)
            #expect(try await app.scalar("SELECT string_agg(key, ' ' ORDER BY key) FROM idempotency_keys WHERE length(key) < 10") == #"a"b abc"#)
        }
    }

    @Test(arguments: [
        [String(repeating: "k", count: 256)],
        ["\"" + String(repeating: "k", count: 256) + "\""],
        [#""""#],
        ["one", "two"],
        ["abc", "abc"],
        ["a b"],
        ["a\tb"],
        [#""abc"#],
        [#""a\nb""#],
        [#""a"b""#],
    ])
    func aMalformedKeyIs400AndWritesNothing(values: [String]) async throws {
        try await TestApp.with { app in
            let headers = values.map { (Self.keyHeader, $0) }
            let response = try await app.request("POST", "/categories", json: #"{"title":"Never","amount":1}"#, headers: headers)
            #expect(response.status == 400, "\(values): \(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.problemFields == [Self.keyHeader], "\(values): \(response.text)")
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.loggedRecordCount() == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
        }
    }

    @Test func aKeyWithAControlCharacterIs400() async throws {
        try await TestApp.with { app in
            // The HTTP parser may refuse the header line before the key is read; either way nothing is written.
            let response = try await app.request(
                "POST", "/categories", json: #"{"title":"Never","amount":1}"#, headers: [(Self.keyHeader, "a\u{01}b")])
            #expect(response.status == 400, "\(response.text)")
            #expect(try await app.rowCount(of: "categories") == 0)
            #expect(try await app.rowCount(of: "idempotency_keys") == 0)
        }
    }

    @Test func aMalformedKeyOnAPatchChangesNothingAndReadsIgnoreKeys() async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Kept","amount":1}"#).status == 201)
            let patched = try await app.request("PATCH", "/categories/1", json: #"{"amount":5}"#, headers: [(Self.keyHeader, #""""#)])
            #expect(patched.status == 400)
            #expect(try await app.scalar("SELECT amount::text || ' v' || version FROM categories WHERE id = 1") == "1.00 v1")
            // A GET takes no key, so even a malformed one is not looked at.
            let read = try await app.request("GET", "/categories/1", headers: [(Self.keyHeader, #""""#)])
            #expect(read.status == 200)
            #expect(read.header(Self.replayedHeader) == nil)
        }
    }

    @Test func aKeyedPatchReplaysItsStoredAnswerNotTheCurrentRecord() async throws {
        try await TestApp.with { app in
            let created = try await app.request("POST", "/categories", json: #"{"title":"Fun","amount":10}"#)
            #expect(created.status == 201)
            // Conditional too: the retry's If-Match is stale by then, yet the key's answer comes first.
            let key = [(Self.keyHeader, "patch-once"), ("If-Match", try #require(created.header("ETag")))]
            let first = try await app.request("PATCH", "/categories/1", json: #"{"amount":12.5}"#, headers: key)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.object["version"] as? Int == 2)
            #expect(first.header(Self.replayedHeader) == nil)

            let other = try await app.request("PATCH", "/categories/1", json: #"{"title":"Leisure"}"#)
            #expect(other.status == 200)
            #expect(other.object["version"] as? Int == 3)

            let retry = try await app.request("PATCH", "/categories/1", json: #"{"amount":12.5}"#, headers: key)
            #expect(retry.status == 200)
            #expect(retry.header(Self.replayedHeader) == "true")
            #expect(retry.body == first.body, "\(retry.text)")
            #expect(retry.object["title"] as? String == "Fun")
            #expect(retry.object["version"] as? Int == 2)
            #expect(retry.header("ETag") == first.header("ETag"))
            #expect(retry.header("ETag") != other.header("ETag"))

            // The record moved on once per write, never for the replay.
            #expect(try await app.scalar("SELECT title || ' ' || amount::text || ' v' || version FROM categories WHERE id = 1") == "Leisure 12.50 v3")
            let current = try await app.request("GET", "/categories/1")
            #expect(current.object["version"] as? Int == 3)
        }
    }

    @Test func aRetriedKeyedDeleteReplaysItsAnswerInsteadOf404() async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Gone","amount":1}"#).status == 201)
            let key = [(Self.keyHeader, "delete-once")]
            let first = try await app.request("DELETE", "/categories/1", headers: key)
            #expect(first.status == 200)
            let retry = try await app.request("DELETE", "/categories/1", headers: key)
            #expect(retry.status == 200)
            #expect(retry.header(Self.replayedHeader) == "true")
            #expect(retry.body == first.body)
            #expect(try await app.request("DELETE", "/categories/1").status == 404)
            #expect(try await app.rowCount(of: "categories") == 0)
        }
    }

    @Test func aRetryReachingAnotherServerProcessReplays() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { first in
            try await TestApp.with(databaseURL: first.databaseURL, poolConfiguration: TestApp.smallPool) { second in
                let body = #"{"title":"Travel","amount":50}"#
                let key = [(Self.keyHeader, "cross-server")]
                let original = try await first.request("POST", "/categories", json: body, headers: key)
                #expect(original.status == 201)
                #expect(original.header(Self.replayedHeader) == nil)
                let retry = try await second.request("POST", "/categories", json: body, headers: key)
                #expect(retry.status == 201)
                #expect(retry.header(Self.replayedHeader) == "true")
                #expect(retry.body == original.body)
                #expect(retry.header("Location") == original.header("Location"))
                #expect(retry.object["id"] as? Int == original.object["id"] as? Int)
                #expect(try await first.rowCount(of: "categories") == 1)
            }
        }
    }

    /// Server A's keyed POST holds the key's lock and waits inside its transaction for a table lock another
    /// session holds; meanwhile the same key on server B is 409. Once the table lock goes, A answers 201
    /// and a retry on B replays it.
    @Test func theSameKeyWhileTheFirstRequestRunsIs409OnAnotherServer() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { serverA in
            try await TestApp.with(databaseURL: serverA.databaseURL, poolConfiguration: TestApp.smallPool) { serverB in
                let body = #"{"title":"Held","amount":1}"#
                let key = [(Self.keyHeader, "held-key")]
                let blocker = try await HeldDatabaseSession.open(serverA.databaseURL)
                try await blocker.execute("BEGIN; LOCK TABLE categories IN SHARE MODE")
                let running = Task { try await serverA.request("POST", "/categories", json: body, headers: key) }
                do {
                    // Deterministic: A's session waits for the categories lock while holding an advisory lock.
                    try await waitUntil("server A's keyed insert waits for the table lock, holding the key's lock") {
                        let waiting = try await serverA.scalar(
                            """
                            SELECT count(*) FROM pg_locks waiting
                            JOIN pg_locks key ON key.pid = waiting.pid AND key.locktype = 'advisory' AND key.granted
                            WHERE waiting.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                              AND waiting.relation = 'categories'::regclass AND NOT waiting.granted
                            """)
                        return waiting == "1"
                    }
                    let concurrent = try await serverB.request("POST", "/categories", json: body, headers: key)
                    #expect(concurrent.status == 409, "\(concurrent.text)")
                    #expect(concurrent.header("Content-Type") == "application/problem+json")
                    #expect(concurrent.header("Retry-After") != nil)
                    #expect(concurrent.object["type"] as? String == "urn:budget-server:problem:idempotency-key-in-use")
                    #expect(concurrent.header(Self.replayedHeader) == nil)
                    #expect(try await serverB.rowCount(of: "idempotency_keys") == 0)
                } catch {
                    try? await blocker.execute("ROLLBACK")
                    await blocker.close()
                    _ = try? await running.value
                    throw error
                }
                try await blocker.execute("COMMIT")
                await blocker.close()

                let original = try await running.value
                #expect(original.status == 201, "\(original.text)")
                #expect(original.header(Self.replayedHeader) == nil)
                let retry = try await serverB.request("POST", "/categories", json: body, headers: key)
                #expect(retry.status == 201)
                #expect(retry.header(Self.replayedHeader) == "true")
                #expect(retry.body == original.body)
                #expect(try await serverA.rowCount(of: "categories") == 1)
                #expect(try await serverA.rowCount(of: "idempotency_keys") == 1)
            }
        }
    }

    @Test func anExpiredKeyRunsAnew() async throws {
        try await TestApp.with { app in
            let key = [(Self.keyHeader, "expires")]
            let first = try await app.request("POST", "/categories", json: #"{"title":"Before","amount":1}"#, headers: key)
            #expect(first.status == 201)
            #expect(try await app.scalar("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' RETURNING key") == "expires")

            let anew = try await app.request("POST", "/categories", json: #"{"title":"After","amount":1}"#, headers: key)
            #expect(anew.status == 201, "\(anew.text)")
            #expect(anew.header(Self.replayedHeader) == nil)
            #expect(anew.object["id"] as? Int == 2)

            // The key now answers for its new request only.
            let retry = try await app.request("POST", "/categories", json: #"{"title":"After","amount":1}"#, headers: key)
            #expect(retry.header(Self.replayedHeader) == "true")
            #expect(retry.body == anew.body)
            let old = try await app.request("POST", "/categories", json: #"{"title":"Before","amount":1}"#, headers: key)
            #expect(old.status == 422)
            #expect(try await app.rowCount(of: "categories") == 2)
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
        }
    }

    @Test func concurrentRequestsWithOneKeyWriteOnce() async throws {
        try await TestApp.with { app in
            let body = #"{"title":"Race","amount":1}"#
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await app.request("POST", "/categories", json: body, headers: [(Self.keyHeader, "race")]) }
                }
                var answers: [TestResponse] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            // Each is the first answer, its replay, or 409 while the first ran; which is up to the scheduler.
            let original = answers.filter { $0.status == 201 && $0.header(Self.replayedHeader) == nil }
            #expect(original.count == 1, "\(answers.map { "\($0.status) \($0.header(Self.replayedHeader) ?? "-")" })")
            for answer in answers where answer.status == 201 {
                #expect(answer.body == original.first?.body)
            }
            #expect(answers.allSatisfy { $0.status == 201 || $0.status == 409 })
            #expect(try await app.rowCount(of: "categories") == 1)
            #expect(try await app.rowCount(of: "idempotency_keys") == 1)
        }
    }
}

/// A method no route takes is the router's 405 (or 404), whatever key or condition it carries.
@Suite struct UnroutedWriteTests {
    @Test func aKeyOrAConditionOnAMethodThePathLacksIs405() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let created = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#, headers: [("Idempotency-Key", "used")])
            #expect(created.status == 201)
            // The same key again on a method /categories does not take: the router answers, not the key's 422.
            let keyed = try await app.request("DELETE", "/categories", headers: [("Idempotency-Key", "used")])
            #expect(keyed.status == 405)
            #expect(keyed.header("Allow") == "GET, HEAD, POST")
            let conditional = try await app.request("PATCH", "/categories", json: #"{"amount":2}"#, headers: [("If-Match", "nonsense")])
            #expect(conditional.status == 405)
            let unknown = try await app.request("PUT", "/a/b/c/d", json: "{}", headers: [("If-Match", "*")])
            #expect(unknown.status == 404)
        }
    }
}
