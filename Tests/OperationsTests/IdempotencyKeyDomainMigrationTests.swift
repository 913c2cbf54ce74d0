import Postgres
import Testing
import TestSupport

/// An idempotency key's checks are domains from migrations/0023 on (a table CHECK is parsed again for every
/// INSERT, a domain's once per session: docs/sync.md, "How a push is written"). Migrating keeps every stored
/// key and answer, and the same values are refused afterwards as before.
@Suite struct IdempotencyKeyDomainMigrationTests {
    static let lastVersionBefore = 22
    static let domains = 23

    static func insert(key: String, status: Int) -> String {
        """
        INSERT INTO idempotency_keys (ledger_id, key, fingerprint, method, path, status, headers, body)
        VALUES (1, '\(key)', sha256('x'), 'POST', '/categories', \(status), '[]', '{}')
        """
    }

    static let rowsDigest = "SELECT md5(string_agg(k::text, ',' ORDER BY k.ledger_id, k.key)) FROM idempotency_keys k"

    @Test func migratingKeepsTheKeysAndStillRefusesWhatTheChecksRefused() async throws {
        let url = try await TestDatabase.empty()
        try await Schema.migrate(url, through: Self.lastVersionBefore)
        try await GapProof.execute(url, Self.insert(key: "before-1", status: 201) + "; " + Self.insert(key: "before-2", status: 200))
        let digest = try await GapProof.scalar(url, Self.rowsDigest)

        try await Schema.migrate(url, through: Self.domains)

        #expect(try await GapProof.scalar(url, Self.rowsDigest) == digest, "a stored key or answer changed")
        #expect(
            try await GapProof.scalar(
                url,
                "SELECT string_agg(atttypid::regtype::text, ',' ORDER BY attname) FROM pg_attribute WHERE attrelid = 'idempotency_keys'::regclass AND attname IN ('key', 'status')"
            ) == "idempotency_key,idempotency_answer_status")
        #expect(
            try await GapProof.scalar(url, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'idempotency_keys'::regclass AND contype = 'c'")
                == "0", "a table check is left")
        try await GapProof.execute(url, Self.insert(key: String(repeating: "k", count: 255), status: 299))
        let refused: [(key: String, status: Int, constraint: String)] = [
            ("", 201, "idempotency_key_length"), (String(repeating: "k", count: 256), 201, "idempotency_key_length"),
            ("after-1", 404, "idempotency_answer_status_success"), ("after-2", 199, "idempotency_answer_status_success"),
        ]
        for row in refused {
            do {
                try await GapProof.execute(url, Self.insert(key: row.key, status: row.status))
                Issue.record("a key of \(row.key.count) characters with status \(row.status) was stored")
            } catch let error as PostgresError {
                #expect(error.sqlState == .checkViolation && error.constraint == row.constraint, "\(error)")
            }
        }
    }
}
