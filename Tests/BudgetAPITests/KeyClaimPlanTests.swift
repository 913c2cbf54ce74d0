@testable import BudgetAPI
import APITestSupport
import Postgres
import Testing

/// How PostgreSQL runs an atomic batch's claim of its keys (`IdempotencyQueries.claimAll`): one index probe
/// and one lock per key, whatever the table holds. Flattened into a join, the statement once read every live
/// key of the ledger for each key of the batch and called the lock function once per pair, so a batch slowed
/// down as keys piled up (bench/README.md, "bench/push").
@Suite struct KeyClaimPlanTests {
    @Test func aBatchClaimProbesEachKeyInsteadOfReadingTheLedgersKeys() async throws {
        try await TestApp.with { app in
            // Statistics taken while the table was empty, then 500 live keys: what made a scan look cheapest.
            _ = try await app.scalar("ANALYZE idempotency_keys")
            _ = try await app.scalar(
                """
                INSERT INTO idempotency_keys (ledger_id, key, fingerprint, method, path, status, headers, body)
                SELECT 1, 'earlier-' || g, sha256('x'), 'POST', '/categories', 201, '[]', '{}' FROM generate_series(1, 500) g
                """)
            let keys = try (1...20).map { index in
                (
                    key: try IdempotencyKey(parsing: "batch-\(index)"),
                    fingerprint: RequestFingerprint(method: .post, target: "/categories", contentType: "application/json", body: [])
                )
            }
            let claim = IdempotencyQueries.claimAll(keys, in: .first)
            let connection = try Connection.connect(to: app.databaseURL)
            defer { connection.close() }
            // The plan the server keeps for the statement after its first executions.
            try connection.execute("SET plan_cache_mode = force_generic_plan")
            let rows = try connection.query("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) \(claim)")
            let plan = try rows.map { try $0.decode(String.self, at: 0) }.joined(separator: "\n")
            #expect(plan.contains("Index Scan using idempotency_keys_pkey"), "\(plan)")
            // The key column is the domain idempotency_key over text (migrations/0023), shown cast to text.
            #expect(plan.contains("((key)::text = "), "the probe finds the key by the index: \(plan)")
            #expect(!plan.contains("Rows Removed by Join Filter"), "keys compared pair by pair: \(plan)")
            #expect(!plan.contains("Bitmap Heap Scan"), "\(plan)")
        }
    }
}
