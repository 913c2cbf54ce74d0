import Foundation
import Postgres
import Testing
import TestSupport

/// Upgrading a populated database to the statement-level change capture (migrations/0013) while a client
/// follows the feed: every change before, during and after the upgrade reaches the follower, every seq
/// handed out before the upgrade stays on its change, and a write held open across it is not lost.
@Suite struct UpgradeMidStreamTests {
    /// The last migration of the row-trigger design.
    static let lastVersionBefore = 12

    /// A record's state as a follower of the feed knows it.
    struct State: Equatable, CustomStringConvertible {
        let op: String
        let version: Int
        var description: String { "\(op) v\(version)" }
    }

    @Test func aFollowerMissesNothingAcrossTheUpgrade() async throws {
        let url = try await TestDatabase.empty()
        try await Schema.migrate(url, through: Self.lastVersionBefore)
        // Written through the old row triggers: some changes stamped by an old run, some committed and not.
        try await GapProof.execute(
            url,
            """
            INSERT INTO categories (id, title, amount) SELECT g, 'C' || g, 10 FROM generate_series(1, 5) g;
            INSERT INTO transactions (id, category_id, title, amount) SELECT g, 1 + g % 5, 'T' || g, 1 FROM generate_series(1, 20) g;
            INSERT INTO collections (name, kind, next_id) VALUES ('notes', 'plural', 2);
            INSERT INTO documents (collection, id, body) VALUES ('notes', '1', '{"id":1,"text":"a"}');
            SELECT advance_change_feed();
            UPDATE categories SET amount = 11, version = version + 1 WHERE id = 2;
            DELETE FROM transactions WHERE id = 3;
            """)
        // The update and the delete took their records' seqs back until a run stamps them again.
        let stampedBefore = try await seqs(url)
        #expect(stampedBefore.count == 24)

        // The follower reads the old feed in small pages, as far as it is stamped.
        var follower: [String: State] = [:]
        var cursor: Int64 = 0
        for _ in 0..<3 {
            let page = try await oldFeedPage(url, since: cursor, limit: 5)
            for (key, state, seq) in page {
                follower[key] = state
                cursor = seq
            }
        }
        #expect(cursor > 0 && cursor < 26, "the follower stopped mid-stream")

        // An old-style write stays open while the new server migrates: the upgrade waits for it and keeps it.
        let held = try await HeldDatabaseSession.open(url)
        try await held.execute("BEGIN; UPDATE categories SET title = 'Held', version = version + 1 WHERE id = 4")
        let starting = Task { try await ServerProcess.start(["--database-url", url]) }
        // As long as a server may take to start (ServerProcess's 90 s, its connections from the suite's budget
        // first): a loaded machine can take longer than the default 20 s to reach the migration.
        try await waitUntil("the upgrade waits for the open write", timeout: .seconds(120)) {
            try await GapProof.scalar(
                url,
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
                """) == "1"
        }
        try await held.execute("COMMIT")
        await held.close()
        let server = try await starting.value

        // Every seq handed out before the upgrade is still on its change.
        let stampedAfter = try await seqs(url)
        for (key, seq) in stampedBefore {
            #expect(stampedAfter[key] == seq || key == "categories/4", "\(key) was stamped \(seq), now \(stampedAfter[key] ?? -1)")
        }

        // New writes through the server and from outside it, the cascade of a category delete among them.
        #expect(try await server.request("POST", "/categories/1/transactions", json: #"{"title":"new","amount":2}"#).status == 201)
        #expect(try await server.request("PATCH", "/transactions/7", json: #"{"amount":3}"#).status == 200)
        #expect(try await server.request("DELETE", "/categories/5").status == 200)
        #expect(try await server.request("POST", "/notes", json: #"{"text":"b"}"#).status == 201)
        try await GapProof.execute(
            url,
            """
            UPDATE documents SET body = '{"id":1,"text":"changed"}', version = version + 1 WHERE collection = 'notes' AND id = '1';
            INSERT INTO transactions (ledger_id, id, category_id, title, amount) VALUES (1, 500, 1, 'from psql', 4);
            """)

        // The follower carries on from its cursor, now through the server.
        var hasMore = true
        var pages = 0
        while hasMore {
            pages += 1
            #expect(pages < 100, "the feed did not end")
            if pages >= 100 { break }
            let page = try await GapProof.changes(server, since: cursor, limit: 5)
            for change in page.changes {
                let key = "\(change["collection"] as? String ?? "?")/\(keyText(change["id"]))"
                follower[key] = State(op: change["op"] as? String ?? "?", version: change["version"] as? Int ?? -1)
            }
            #expect(page.lastSeq >= cursor)
            cursor = page.lastSeq
            hasMore = page.hasMore
        }

        let expected = try await finalStates(url)
        let wrong = expected.filter { follower[$0.key] != $0.value }
        #expect(
            wrong.isEmpty,
            "not followed to their final state: \(wrong.map { "\($0.key) \($0.value) vs \(follower[$0.key].map(\.description) ?? "unseen")" }.sorted().prefix(8))"
        )
        #expect(expected["categories/4"] == State(op: "upsert", version: 2), "the write held across the upgrade")
        #expect(expected["transactions/3"] == State(op: "delete", version: 1))
        #expect(
            expected.filter { $0.value.op == "delete" && $0.key.hasPrefix("transactions/") }.count == 5,
            "transaction 3 and the four of category 5")
        #expect(try await GapProof.scalar(url, "SELECT last_seq = (SELECT max(seq) FROM change_log) FROM change_feed_state") == "t")
    }

    /// Each stamped change's seq by record, `collection/key`.
    private func seqs(_ url: String) async throws -> [String: Int64] {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var seqs: [String: Int64] = [:]
            for row in try connection.query("SELECT collection || '/' || record_key, seq FROM change_log WHERE seq IS NOT NULL") {
                seqs[try row.decode(String.self, at: 0)] = try row.decode(Int64.self, at: 1)
            }
            return seqs
        }
    }

    /// A page of the feed as the old server read it: the stamped changes after `since`, in seq order.
    private func oldFeedPage(_ url: String, since: Int64, limit: Int) async throws -> [(String, State, Int64)] {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            return try connection.query(
                """
                SELECT collection || '/' || record_key, op, version, seq FROM change_log
                WHERE seq > \(since) ORDER BY seq LIMIT \(Int64(limit))
                """
            ).map { row in
                (
                    try row.decode(String.self, at: 0),
                    State(op: try row.decode(String.self, at: 1), version: try row.decode(Int.self, at: 2)),
                    try row.decode(Int64.self, at: 3)
                )
            }
        }
    }

    /// What a complete follower must hold: every live record at its version, every deleted one a tombstone
    /// at the version it had, read from the tables and the log's tombstones.
    private func finalStates(_ url: String) async throws -> [String: State] {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var states: [String: State] = [:]
            // Tombstones first: a record written again after its delete is live.
            for row in try connection.query(
                """
                SELECT collection || '/' || record_key, version, 'delete', 0 FROM change_log WHERE op = 'delete'
                UNION ALL SELECT 'categories/' || id, version, 'upsert', 1 FROM categories
                UNION ALL SELECT 'transactions/' || id, version, 'upsert', 1 FROM transactions
                UNION ALL SELECT collection || '/' || id, version, 'upsert', 1 FROM documents
                ORDER BY 4
                """)
            {
                states[try row.decode(String.self, at: 0)] = State(
                    op: try row.decode(String.self, at: 2),
                    version: try row.decode(Int.self, at: 1))
            }
            return states
        }
    }

    private func keyText(_ id: Any?) -> String {
        switch id {
        case let number as Int: String(number)
        case let text as String: text
        default: ""
        }
    }
}
