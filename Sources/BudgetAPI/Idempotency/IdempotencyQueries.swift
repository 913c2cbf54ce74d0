import BudgetCore
import Postgres

/// The SQL behind idempotency keys (migrations/0010); the only place that knows the table's columns.
enum IdempotencyQueries {
    /// The first of the two-int advisory lock keys, naming the idempotency keys' lock space ("IDKY").
    /// The two-int form never collides with the change feed's one-bigint lock (migrations/0009).
    private static let lockSpace: Int32 = 0x4944_4B59

    /// The unique index a key's second row meets (migrations/0017).
    static let keyConstraint = "idempotency_keys_pkey"

    /// How long a key replays its first answer (24 h: docs/sync.md, Idempotency keys); every statement below
    /// counts from it.
    static let lifetime: Query = "interval '24 hours'"

    /// One statement: try to take the key's transaction lock (never waiting), and only if taken, read the
    /// key's live row. Columns: locked, found, fingerprint matches, status, headers (JSON text), body, and
    /// whether the answer is a written row (`createAndStore`).
    ///
    /// Not waiting is the point: a second request with the key while the first still runs, on any server
    /// process, answers 409 at once instead of queueing behind it.
    ///
    /// Keys are per ledger: the lock hashes the ledger with the key, so the same key in two ledgers never
    /// answers "in progress" for the other (a hash collision between two pairs only costs a rare false 409).
    static func claim(_ key: IdempotencyKey, fingerprint: RequestFingerprint, in ledger: LedgerID) -> Query {
        """
        SELECT l.locked, k.key IS NOT NULL, k.fingerprint = sha256(convert_to(\(fingerprint.canonicalText), 'UTF8')),
               k.status, k.headers::text, k.body, k.written_row IS NOT NULL
        FROM (SELECT pg_try_advisory_xact_lock(\(lockSpace), hashtext(\(ledger)::text || ':' || \(key.value))) AS locked) l
        LEFT JOIN idempotency_keys k
            ON l.locked AND k.ledger_id = \(ledger) AND k.key = \(key.value) AND k.created_at > now() - \(lifetime)
        """
    }

    /// `claim` as a statement that fails when the key is taken, to send ahead of the write it guards in one
    /// round trip: the server then skips the write (migrations/0021). Raises `SQLState.idempotencyKeyBusy` or
    /// `.idempotencyKeyAnswered` (then `claim` reads the answer); answers nothing of use when the key is free.
    static func claimOrRefuse(_ key: IdempotencyKey, in ledger: LedgerID) -> Query {
        """
        SELECT refuse_taken_idempotency_key(l.locked, k.key IS NOT NULL)
        FROM (SELECT pg_try_advisory_xact_lock(\(lockSpace), hashtext(\(ledger)::text || ':' || \(key.value))) AS locked) l
        LEFT JOIN idempotency_keys k
            ON l.locked AND k.ledger_id = \(ledger) AND k.key = \(key.value) AND k.created_at > now() - \(lifetime)
        """
    }

    /// `claim` for the keyed operations of one atomic batch at once: one row per element of `keys` (each a
    /// key with its request's fingerprint text), in their order, with the same columns. The lock and the row
    /// are the same a single request's `claim` takes and reads, so a batch and a request with one key exclude
    /// each other on any server process.
    ///
    /// Both fences (`OFFSET 0`, `LIMIT 1`) keep the plan to one lock call and one index probe per key. Left
    /// to itself, PostgreSQL flattened the statement into a join that read every live key of the ledger for
    /// each element and called the lock function once per pair: a batch cost more the more keys the table
    /// held (bench/README.md, "bench/push").
    static func claimAll(_ keys: [(key: IdempotencyKey, fingerprint: RequestFingerprint)], in ledger: LedgerID) -> Query {
        let elements = keys.map { JSONValue.object(["key": .string($0.key.value), "canonical": .string($0.fingerprint.canonicalText)]) }
        return """
            SELECT c.locked, k.found IS NOT NULL, k.fingerprint = sha256(convert_to(c.canonical, 'UTF8')),
                   k.status, k.headers::text, k.body, k.written_row IS NOT NULL
            FROM (
                SELECT e.key, e.canonical, e.n, pg_try_advisory_xact_lock(\(lockSpace), hashtext(\(ledger)::text || ':' || e.key)) AS locked
                FROM ROWS FROM (json_to_recordset(\(JSONWriter.string(.array(elements)))::json) AS (key text, canonical text))
                    WITH ORDINALITY AS e(key, canonical, n)
                OFFSET 0) c
            LEFT JOIN LATERAL (
                SELECT true AS found, k.fingerprint, k.status, k.headers, k.body, k.written_row FROM idempotency_keys k
                WHERE c.locked AND k.ledger_id = \(ledger) AND k.key = c.key AND k.created_at > now() - \(lifetime)
                LIMIT 1) k ON true
            ORDER BY c.n
            """
    }

    /// `store` for every answer of one atomic batch in one statement; the keys must differ (a key's second use
    /// in a batch replays the first and stores nothing). Each answer's values are parameters of their own, as
    /// `store`'s are: PostgreSQL reads them as they come, where a JSON document of every answer had to be
    /// written here and parsed there, its bodies escaped inside it.
    static func storeAll(_ answers: [(key: IdempotencyKey, fingerprint: RequestFingerprint, answer: StoredAnswer)], in ledger: LedgerID)
        -> Query
    {
        let rows = answers.map { key, fingerprint, answer -> Query in
            """
            (\(key.value), \(fingerprint.canonicalText), \(fingerprint.method), \(fingerprint.target), \(Int32(answer.status))::smallint, \
            \(answer.headersJSON), \(answer.body))
            """
        }
        return """
            INSERT INTO idempotency_keys AS existing (ledger_id, key, fingerprint, method, path, status, headers, body)
            SELECT \(ledger)::bigint, a.key, sha256(convert_to(a.canonical, 'UTF8')), a.method, a.path, a.status, a.headers::json, a.body
            FROM (VALUES \(Query.joined(rows, separator: ", "))) AS a(key, canonical, method, path, status, headers, body)
            ON CONFLICT (ledger_id, key) DO UPDATE
                SET fingerprint = excluded.fingerprint, method = excluded.method, path = excluded.path,
                    status = excluded.status, headers = excluded.headers, body = excluded.body, written_row = NULL,
                    created_at = now()
                WHERE existing.created_at <= now() - \(lifetime)
            """
    }

    /// Stores the answer in the caller's transaction. An expired row under the same key is replaced; a live
    /// one that this transaction's snapshot could not see (it committed meanwhile) fails the statement with
    /// a serialization failure, so the whole request runs again and replays that row instead.
    static func store(
        _ key: IdempotencyKey, fingerprint: RequestFingerprint, status: Int, headers: String, body: String, in ledger: LedgerID
    ) -> Query {
        """
        INSERT INTO idempotency_keys AS existing (ledger_id, key, fingerprint, method, path, status, headers, body)
        VALUES (\(ledger), \(key.value), sha256(convert_to(\(fingerprint.canonicalText), 'UTF8')), \(fingerprint.method),
                \(fingerprint.target), \(Int32(status))::smallint, \(headers)::json, \(body))
        ON CONFLICT (ledger_id, key) DO UPDATE
            SET fingerprint = excluded.fingerprint, method = excluded.method, path = excluded.path,
                status = excluded.status, headers = excluded.headers, body = excluded.body, written_row = NULL,
                created_at = now()
            WHERE existing.created_at <= now() - \(lifetime)
        """
    }

    /// A keyed create as one statement (docs/sync.md, "How a push is written"): `insert`, a create route's
    /// INSERT of one row answering `columns` columns, and the key's row, which keeps that row's columns as text
    /// for a retry to be answered from (`writtenRow`). Answers the INSERT's row.
    ///
    /// The key's row is a plain INSERT: when the key already has a row, live or expired, its unique index
    /// refuses the statement and nothing of it is written; a request with the same key still running holds the
    /// index entry, so this one waits for it and then fails the same way. The request then runs as every keyed
    /// request does, which replays, refuses or replaces what the key holds.
    ///
    /// A column's `::text` is the text PostgreSQL would have answered (connections run with `TimeZone=UTC`
    /// and `DateStyle=ISO`), but for a boolean: `true`/`false` rather than `t`/`f`, which reads the same
    /// (`Bool(postgresText:)`, and the renderers look at the first letter).
    static func createAndStore(
        _ insert: Query, columns: Int, key: IdempotencyKey, fingerprint: RequestFingerprint, in ledger: LedgerID
    ) -> Query {
        let names = (1...columns).map { "c\($0)" }
        return """
            WITH w(\(unsafeSQL: names.joined(separator: ", "))) AS (\(insert)),
            k AS (
                INSERT INTO idempotency_keys (ledger_id, key, fingerprint, method, path, status, headers, body, written_row)
                SELECT \(ledger)::bigint, \(key.value)::text, sha256(convert_to(\(fingerprint.canonicalText), 'UTF8')),
                       \(fingerprint.method)::text, \(fingerprint.target)::text, 201, '[]'::json, '', ARRAY[\(unsafeSQL: names.map { "w.\($0)::text" }.joined(separator: ", "))]
                FROM w)
            SELECT * FROM w
            """
    }

    /// The row a one-statement create kept under the key (`createAndStore`), as the columns its INSERT
    /// answered, in text: what the route renders again for a retry.
    static func writtenRow(_ key: IdempotencyKey, columns: Int, in ledger: LedgerID) -> Query {
        """
        SELECT \(unsafeSQL: (1...columns).map { "k.written_row[\($0)]" }.joined(separator: ", "))
        FROM idempotency_keys k WHERE k.ledger_id = \(ledger) AND k.key = \(key.value)
        """
    }

    /// Deletes keys past their lifetime; answers how many went.
    static let purgeExpired: Query = """
        WITH purged AS (DELETE FROM idempotency_keys WHERE created_at <= now() - \(lifetime) RETURNING 1)
        SELECT count(*) FROM purged
        """
}

extension SQLState {
    /// `refuse_taken_idempotency_key` (migrations/0021): the key is held by a request still running.
    static let idempotencyKeyBusy: SQLState = "IK409"
    /// `refuse_taken_idempotency_key` (migrations/0021): the key has a live stored answer.
    static let idempotencyKeyAnswered: SQLState = "IK200"
}
