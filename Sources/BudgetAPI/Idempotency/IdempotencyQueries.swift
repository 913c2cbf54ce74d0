import Postgres

/// The SQL behind idempotency keys (migrations/0010); the only place that knows the table's columns.
enum IdempotencyQueries {
    /// The first of the two-int advisory lock keys, naming the idempotency keys' lock space ("IDKY").
    /// The two-int form never collides with the change feed's one-bigint lock (migrations/0009).
    private static let lockSpace: Int32 = 0x4944_4B59

    /// How long a key replays its first answer (24 h: docs/sync.md, Idempotency keys); every statement below
    /// counts from it.
    static let lifetime: Query = "interval '24 hours'"

    /// One statement: try to take the key's transaction lock (never waiting), and only if taken, read the
    /// key's live row. Columns: locked, found, fingerprint matches, status, headers (JSON text), body.
    ///
    /// Not waiting is the point: a second request with the key while the first still runs, on any server
    /// process, answers 409 at once instead of queueing behind it.
    ///
    /// Keys are per ledger: the lock hashes the ledger with the key, so the same key in two ledgers never
    /// answers "in progress" for the other (a hash collision between two pairs only costs a rare false 409).
    static func claim(_ key: IdempotencyKey, fingerprint: RequestFingerprint, in ledger: LedgerID) -> Query {
        """
        SELECT l.locked, k.key IS NOT NULL, k.fingerprint = sha256(convert_to(\(fingerprint.canonicalText), 'UTF8')),
               k.status, k.headers::text, k.body
        FROM (SELECT pg_try_advisory_xact_lock(\(lockSpace), hashtext(\(ledger)::text || ':' || \(key.value))) AS locked) l
        LEFT JOIN idempotency_keys k
            ON l.locked AND k.ledger_id = \(ledger) AND k.key = \(key.value) AND k.created_at > now() - \(lifetime)
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
                status = excluded.status, headers = excluded.headers, body = excluded.body, created_at = now()
            WHERE existing.created_at <= now() - \(lifetime)
        """
    }

    /// Deletes keys past their lifetime; answers how many went.
    static let purgeExpired: Query = """
        WITH purged AS (DELETE FROM idempotency_keys WHERE created_at <= now() - \(lifetime) RETURNING 1)
        SELECT count(*) FROM purged
        """
}
