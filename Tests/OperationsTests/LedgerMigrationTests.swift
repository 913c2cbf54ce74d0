import Foundation
import Postgres
import Testing
import TestSupport

/// Migrating a populated database to households (migrations/0016 and 0017; issue 27, Done item 4, at test
/// size): every row lands in ledger 1 with every column it had, the feed keeps its seqs, its purge horizon and
/// its pending changes, and a server on the migrated database answers byte for byte as one on a database that
/// got the same rows after migrating.
@Suite struct LedgerMigrationTests {
    /// The last migration before households.
    static let lastVersionBefore = 15
    static let households = 17

    /// Every table of a ledger's data but `change_feed_state` (compared by its values: 0017 drops its
    /// singleton column), with the order of its key before households.
    static let tables: [(name: String, order: String)] = [
        ("categories", "id"), ("transactions", "id"), ("budgets", "id"), ("collections", "name"),
        ("documents", "collection, id"), ("change_log", "collection, record_key"), ("change_pending", "position"),
        ("idempotency_keys", "key"),
    ]
    static let sequences = [
        "categories_id_seq", "transactions_id_seq", "budgets_id_seq", "documents_position_seq",
        "change_pending_position_seq",
    ]

    @Test func everyRowLandsInLedgerOneAndAnswersStayTheSame() async throws {
        let old = try await TestDatabase.empty()
        try await Schema.migrate(old, through: Self.lastVersionBefore)
        try await GapProof.execute(old, Self.load(idempotencyLedger: nil))

        let columns = try await Self.columns(old)
        let before = try await Self.digests(old, columns: columns)
        let feedBefore = try await Self.rows(old, "SELECT last_seq, purged_seq FROM change_feed_state")
        #expect(feedBefore.count == 1)
        let (lastSeq, purgedSeq) = (Int64(feedBefore.first?[0] ?? "") ?? -1, Int64(feedBefore.first?[1] ?? "") ?? -1)
        #expect(purgedSeq > 0 && lastSeq > purgedSeq, "a purge horizon below the feed's end: \(feedBefore)")
        // The pending changes in the order a run numbers them: each record once, at its latest write.
        let pending = try await GapProof.scalar(
            old,
            """
            SELECT string_agg(k, ',' ORDER BY p) FROM (
                SELECT collection || '/' || record_key AS k, max(position) AS p FROM change_pending GROUP BY 1) s
            """)
        let pendingRecords = pending?.split(separator: ",").count ?? 0
        #expect(pendingRecords > 10, "changes left unstamped: \(pending ?? "none")")

        let started = ContinuousClock.now
        try await Schema.migrate(old, through: Self.households)
        let took = ContinuousClock.now - started

        #expect(try await Self.digests(old, columns: columns) == before, "a column of a row that existed changed")
        for table in Self.tables.map(\.name) + ["change_feed_state"] {
            #expect(
                try await GapProof.scalar(old, "SELECT count(*) FROM \(table) WHERE ledger_id <> 1") == "0",
                "rows of \(table) outside ledger 1")
        }
        #expect(try await Self.rows(old, "SELECT id FROM ledgers") == [["1"]])
        #expect(
            try await Self.rows(old, "SELECT ledger_id, last_seq, purged_seq FROM change_feed_state")
                == [["1", "\(lastSeq)", "\(purgedSeq)"]])

        // The changes pending across the migration are stamped by the next run, going on from the old last_seq.
        #expect(try await GapProof.scalar(old, "SELECT advance_change_feed()") == "\(pendingRecords)")
        let newLast = lastSeq + Int64(pendingRecords)
        #expect(
            try await Self.rows(old, "SELECT last_seq, purged_seq FROM change_feed_state WHERE ledger_id = 1")
                == [["\(newLast)", "\(purgedSeq)"]])
        #expect(
            try await Self.rows(old, "SELECT count(*), min(seq), max(seq) FROM change_log WHERE seq > \(lastSeq)")
                == [["\(pendingRecords)", "\(lastSeq + 1)", "\(newLast)"]])
        #expect(
            try await GapProof.scalar(
                old,
                """
                SELECT string_agg(collection || '/' || record_key, ',' ORDER BY seq) FROM change_log WHERE seq > \(lastSeq)
                """) == pending)

        // The reference: the same rows, with the same ids and timestamps, written after migrating.
        let fresh = try await TestDatabase.empty()
        try await Schema.migrate(fresh, through: Self.households)
        try await GapProof.execute(fresh, Self.load(idempotencyLedger: 1))
        _ = try await GapProof.scalar(fresh, "SELECT advance_change_feed()")
        #expect(
            try await Self.rows(fresh, "SELECT ledger_id, last_seq, purged_seq FROM change_feed_state")
                == [["1", "\(newLast)", "\(purgedSeq)"]], "the reference's feed is numbered as the migrated one")

        let migrated = try await ServerProcess.start(["--database-url", old])
        let reference = try await ServerProcess.start(["--database-url", fresh])
        for path in ["/categories", "/db", "/posts", "/profile", "/transactions?_sort=id&_limit=50", "/changes?since=0&limit=1000"] {
            let answer = try await migrated.request("GET", path)
            let expected = try await reference.request("GET", path)
            #expect(answer.status == 200, "GET \(path) answered \(answer.status): \(answer.text.prefix(300))")
            #expect(answer.status == expected.status)
            #expect(answer.body == expected.body, "GET \(path): the bodies differ \(Self.difference(answer.text, expected.text))")
            for header in ["ETag", "X-Sync-Seq", "X-Total-Count", "Content-Type"] {
                #expect(answer.header(header) == expected.header(header), "GET \(path): \(header)")
            }
            #expect(answer.header("ETag") != nil, "GET \(path) has an ETag")
        }
        print(
            "ledger migration: 0016 and 0017 in \(took) on \(before.count) tables and sequences, "
                + "last_seq \(lastSeq) → \(newLast) after the \(pendingRecords) pending, purged_seq \(purgedSeq)")
    }

    /// Ledger-less data at test size, with explicit ids and timestamps so that two databases hold the same:
    /// categories (one with a client-chosen id far past the sequence), transactions with import ids, budgets,
    /// a plural, a singular and a string-keyed generic collection; a feed with updates, tombstones (a cascade,
    /// a moved key), a purge horizon; changes left unstamped; idempotency keys. `idempotencyLedger` names the
    /// ledger for a database past 0017, where that table has no default.
    ///
    /// The two databases number a statement's changes in the order its plan met the rows, and the plans differ
    /// with the keys: a statement that changes several rows here finds them by a scan of the table, and the
    /// cascade takes one transaction.
    static func load(idempotencyLedger: Int64?) -> String {
        let t0 = "TIMESTAMPTZ '2025-03-01 10:00:00+00'"
        let t1 = "TIMESTAMPTZ '2025-04-02 11:30:00.123456+00'"
        let t2 = "TIMESTAMPTZ '2025-05-03 12:45:00+00'"
        return """
            INSERT INTO categories (id, title, amount, rollover, created_at, updated_at)
            SELECT i, 'Category ' || i, (100 + i)::numeric(14,2), i % 4 = 0, \(t0) + make_interval(mins => i), \(t0) + make_interval(mins => i)
            FROM generate_series(1, 20) i;
            INSERT INTO categories (id, title, amount, created_at, updated_at) VALUES (5000, 'Chosen far', 10, \(t0), \(t0));
            INSERT INTO categories (id, title, amount, created_at, updated_at) VALUES (21, 'Going', 5, \(t0), \(t0));
            INSERT INTO transactions (id, category_id, title, amount, date, note, import_id, created_at, updated_at)
            SELECT i, 1 + i % 20, 'Purchase ' || i, ((i * 37) % 10000) / 100.0 - CASE WHEN i % 17 = 0 THEN 120 ELSE 0 END,
                   DATE '2025-01-01' + i % 90, CASE WHEN i % 5 = 0 THEN 'note ' || i || E' \\u00e9\\u20ac "quoted"' END,
                   CASE WHEN i % 10 = 0 THEN 'stmt-' || i END, \(t0) + make_interval(secs => i), \(t0) + make_interval(secs => i)
            FROM generate_series(1, 300) i;
            INSERT INTO transactions (id, category_id, title, amount, date, created_at, updated_at)
            VALUES (250000, 5000, 'Chosen id', 1.50, DATE '2025-02-02', \(t0), \(t0)), (400, 21, 'Goes too', 3, DATE '2025-02-03', \(t0), \(t0));
            INSERT INTO budgets (id, category_id, month, amount, created_at, updated_at)
            SELECT c, c, DATE '2025-02-01', 150 + c, \(t0), \(t0) FROM generate_series(5, 20, 5) c;
            INSERT INTO budgets (id, category_id, month, amount, created_at, updated_at) VALUES (21, 21, DATE '2025-02-01', 7, \(t0), \(t0));
            INSERT INTO collections (name, kind, next_id, created_at) VALUES
                ('posts', 'plural', 41, \(t0)), ('profile', 'singular', 1, \(t0)), ('tags', 'plural', 1, \(t0));
            INSERT INTO documents (collection, id, body, created_at, updated_at)
            SELECT 'posts', i::text, json_build_object('id', i, 'title', 'Post ' || i, 'views', i * 3, 'published', i % 2 = 0)::text::json,
                   \(t0), \(t0)
            FROM generate_series(1, 40) i ORDER BY i;
            INSERT INTO documents (collection, id, body, created_at, updated_at) VALUES ('profile', '', '{"name":"typicode","n":12.10}', \(t0), \(t0));
            INSERT INTO documents (collection, id, body, created_at, updated_at)
            SELECT 'tags', 't' || i, ('{"id":"t' || i || '","label":"tag ' || i || '"}')::json, \(t0), \(t0) FROM generate_series(1, 10) i ORDER BY i;
            SELECT advance_change_feed(2147483647);

            UPDATE transactions SET note = 'edited', version = version + 1, updated_at = \(t1) WHERE id % 20 = 3;
            UPDATE documents SET body = ('{"id":' || id || ',"title":"Post ' || id || ' v2"}')::json, version = version + 1, updated_at = \(t1)
            WHERE collection = 'posts' AND id::int % 10 = 0;
            DELETE FROM transactions WHERE id % 50 = 7;
            DELETE FROM documents WHERE collection = 'posts' AND id::int % 13 = 0;
            DELETE FROM categories WHERE id = 21;
            UPDATE transactions SET id = 300000 WHERE id = 11;
            SELECT advance_change_feed(2147483647);
            UPDATE change_log SET changed_at = now() - interval '40 days'
            WHERE op = 'delete' AND seq < (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY seq) FROM change_log WHERE op = 'delete');
            SELECT purge_change_tombstones(interval '30 days');
            DELETE FROM documents WHERE collection = 'tags' AND id IN ('t1', 't2', 't3');
            SELECT advance_change_feed(2147483647);

            INSERT INTO transactions (id, category_id, title, amount, date, import_id, created_at, updated_at)
            SELECT 1000 + i, 1, 'pending ' || i, 2.00, DATE '2025-03-01', 'late-' || i, \(t2), \(t2) FROM generate_series(1, 10) i;
            UPDATE transactions SET amount = amount + 1, version = version + 1, updated_at = \(t2) WHERE id = 1001;
            UPDATE documents SET body = '{"name":"pending","n":1}', version = version + 1, updated_at = \(t2) WHERE collection = 'profile';
            DELETE FROM transactions WHERE id = 41;
            DELETE FROM transactions WHERE id = 1;
            INSERT INTO documents (collection, id, body, created_at, updated_at) VALUES ('tags', 't1', '{"id":"t1","label":"again"}', \(t2), \(t2));

            INSERT INTO idempotency_keys (\(idempotencyLedger == nil ? "" : "ledger_id, ")key, fingerprint, method, path, status, headers, body, created_at)
            SELECT \(idempotencyLedger.map { "\($0), " } ?? "")'key-' || i, sha256(convert_to('POST /categories ' || i, 'UTF8')), 'POST', '/categories', 201,
                   ('[["Location","/categories/' || i || '"],["ETag","\\"abc' || i || '\\""]]')::json, '{"id":' || i || ',"title":"t"}',
                   \(t0) + make_interval(secs => i)
            FROM generate_series(1, 40) i;
            """
    }

    /// Each table's columns as the database has them now, in their order.
    static func columns(_ url: String) async throws -> [String: String] {
        var columns: [String: String] = [:]
        for table in tables.map(\.name) {
            columns[table] = try await GapProof.scalar(
                url,
                """
                SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) FROM information_schema.columns
                WHERE table_schema = 'public' AND table_name = '\(table)'
                """)
        }
        return columns
    }

    /// Per table, its row count and an md5 of `columns` of every row in the order of its old key; per sequence,
    /// where it stands.
    static func digests(_ url: String, columns: [String: String]) async throws -> [String: String] {
        var digests: [String: String] = [:]
        for (table, order) in tables {
            let list = columns[table] ?? "?"
            digests[table] = try await GapProof.scalar(
                url,
                """
                SELECT count(*) || ' ' || md5(coalesce(string_agg(row(\(list))::text, E'\\n' ORDER BY \(order)), '')) FROM \(table)
                """)
        }
        for sequence in sequences {
            digests[sequence] = try await GapProof.scalar(url, "SELECT last_value || ' ' || is_called FROM \(sequence)")
        }
        return digests
    }

    /// Where two texts part, with some of each from there: `answer.body == expected.body` alone would print
    /// every byte of both.
    static func difference(_ one: String, _ other: String) -> String {
        let common = zip(one, other).prefix { $0 == $1 }.count
        let start = max(0, common - 80)
        return "from character \(common): …\(one.dropFirst(start).prefix(240)) versus …\(other.dropFirst(start).prefix(240))"
    }

    /// Every row of a query, each column as text.
    static func rows(_ url: String, _ sql: String) async throws -> [[String?]] {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            let result = try connection.query(Query(unsafeSQL: sql))
            return result.map { row in result.columnNames.indices.map { row.column($0) } }
        }
    }
}
