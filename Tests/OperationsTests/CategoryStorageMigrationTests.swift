import Postgres
import Testing
import TestSupport

/// Categories fill a fifth of each page (migrations/0022), so that the foreign key's check on every insert of a
/// transaction, and the category read, find a category through `categories_pkey`: on the three pages 200
/// narrow rows fill when packed, PostgreSQL reads them all instead (bench/README.md, "The write path").
/// Migrating a database that has categories spreads its rows and changes none of them.
@Suite struct CategoryStorageMigrationTests {
    static let lastVersionBefore = 21
    static let spread = 22

    /// The plan PostgreSQL keeps for the check `transactions_category_id_fkey` runs on every insert (the
    /// query is ri_triggers.c's, word for word): one generic plan per session after five custom ones.
    static func plannedCheck(_ url: String) async throws -> String {
        try await GapProof.scalar(
            url, "EXPLAIN (COSTS OFF, FORMAT JSON) EXECUTE category_check(1, 5)",
            setup: """
                SET plan_cache_mode = force_generic_plan;
                PREPARE category_check(bigint, bigint) AS SELECT 1 FROM ONLY public.categories x
                    WHERE ledger_id OPERATOR(pg_catalog.=) $1 AND id OPERATOR(pg_catalog.=) $2 FOR KEY SHARE OF x;
                """) ?? ""
    }

    /// The bench's 200 categories, as the peers' data.sql writes them.
    static let twoHundredCategories = """
        INSERT INTO categories (title, amount) SELECT 'Category ' || g, (2500 + g * 7.25)::numeric(14,2)
        FROM generate_series(1, 200) AS g;
        ANALYZE categories;
        """

    static let rowsDigest = "SELECT md5(string_agg(c::text, ',' ORDER BY c.ledger_id, c.id)) FROM categories c"
    static let pages = "SELECT pg_relation_size('categories') / current_setting('block_size')::bigint"

    @Test func migratingSpreadsTheCategoriesThatExistAndChangesNoRow() async throws {
        let url = try await TestDatabase.empty()
        try await Schema.migrate(url, through: Self.lastVersionBefore)
        try await GapProof.execute(url, Self.twoHundredCategories)
        let digest = try await GapProof.scalar(url, Self.rowsDigest)
        let pending = try await GapProof.scalar(url, "SELECT count(*) FROM change_pending")
        let pagesBefore = Int(try await GapProof.scalar(url, Self.pages) ?? "") ?? -1
        // Before: a few dense pages, which PostgreSQL reads whole for every check under its default costs (a
        // server in DATABASE_URL may be tuned otherwise).
        #expect(pagesBefore > 0 && pagesBefore <= 5, "categories took \(pagesBefore) pages before 0022")
        let costs = try await GapProof.scalar(url, "SELECT current_setting('seq_page_cost') || '/' || current_setting('random_page_cost')")
        if costs == "1/4" {
            #expect(try await Self.plannedCheck(url).contains("\"Seq Scan\""))
        }

        try await Schema.migrate(url, through: Self.spread)
        try await GapProof.execute(url, "ANALYZE categories")

        let pagesAfter = Int(try await GapProof.scalar(url, Self.pages) ?? "") ?? -1
        #expect(pagesAfter >= 10, "categories take \(pagesAfter) pages after 0022")
        let plan = try await Self.plannedCheck(url)
        #expect(plan.contains("\"Index Name\": \"categories_pkey\""), "\(plan)")
        #expect(try await GapProof.scalar(url, Self.rowsDigest) == digest, "a category changed")
        #expect(try await GapProof.scalar(url, "SELECT count(*) FROM change_pending") == pending, "the rewrite was captured")
        #expect(try await GapProof.scalar(url, "SELECT reloptions::text FROM pg_class WHERE relname = 'categories'") == "{fillfactor=20}")
        // CLUSTER's mark is gone: a CLUSTER without a table name would not rewrite the table again.
        #expect(
            try await GapProof.scalar(url, "SELECT count(*) FROM pg_index WHERE indrelid = 'categories'::regclass AND indisclustered")
                == "0")
    }

    @Test func categoriesWrittenAfterMigratingAreSpreadToo() async throws {
        let url = try await TestDatabase.fresh()
        try await GapProof.execute(url, Self.twoHundredCategories)
        let pages = Int(try await GapProof.scalar(url, Self.pages) ?? "") ?? -1
        #expect(pages >= 10, "200 categories take \(pages) pages")
        let plan = try await Self.plannedCheck(url)
        #expect(plan.contains("\"Index Name\": \"categories_pkey\""), "\(plan)")
        // The foreign key still refuses a category of no ledger's and another ledger's alike.
        try await GapProof.execute(url, "INSERT INTO ledgers (id, name) VALUES (2, 'Other')")
        for ledger in [1, 2] {
            let category = ledger == 1 ? 999 : 5
            do {
                try await GapProof.execute(
                    url, "INSERT INTO transactions (ledger_id, category_id, title, amount) VALUES (\(ledger), \(category), 'x', 1)")
                Issue.record("ledger \(ledger) booked a transaction against category \(category)")
            } catch let error as PostgresError {
                #expect(error.sqlState == .foreignKeyViolation && error.constraint == "transactions_category_id_fkey", "\(error)")
            }
        }
    }
}
