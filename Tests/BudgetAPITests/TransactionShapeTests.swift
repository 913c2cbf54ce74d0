import Postgres
import Testing
import TestSupport
import APITestSupport

/// A transaction's shape rules hold for every writer, checked once per statement by the capture triggers
/// (migrations/0020): a transaction counts somewhere, a split has no category, transfer or parent of its own,
/// and a part names a category and nothing its split carries. A write from psql that breaks one fails as a
/// CHECK did, with check_violation and the rule's name, and writes nothing.
@Suite struct TransactionShapeTests {
    /// The constraint a statement fails with, or nil when it succeeds.
    private func failure(_ app: TestApp, _ sql: String) async throws -> String? {
        do {
            _ = try await app.scalar(sql)
            return nil
        } catch let error as PostgresError {
            #expect(error.sqlState == .checkViolation, "\(sql): \(error)")
            return error.constraint
        }
    }

    @Test func psqlWritesThatBreakARuleFailAndWriteNothing() async throws {
        try await TestApp.with { app in
            _ = try await app.scalar("INSERT INTO categories (ledger_id, id, title, amount) VALUES (1, 7, 'Food', 5)")
            _ = try await app.scalar("INSERT INTO accounts (ledger_id, id, name, type, on_budget) VALUES (1, 3, 'Cash', 'cash', true)")
            _ = try await app.scalar(
                "INSERT INTO transactions (ledger_id, id, category_id, title, amount) VALUES (1, 40, 7, 'Tea', 2)")
            let before = try await app.scalar("SELECT count(*) FROM transactions")

            // Inserts, also as the second row of a statement whose first row is well formed.
            #expect(
                try await failure(app, "INSERT INTO transactions (ledger_id, id, title, amount) VALUES (1, 41, 'Nowhere', 1)")
                    == "transactions_account_or_category")
            #expect(
                try await failure(
                    app,
                    "INSERT INTO transactions (ledger_id, id, category_id, title, amount) VALUES (1, 41, 7, 'Fine', 1), (1, 42, NULL, 'Nowhere', 1)"
                ) == "transactions_account_or_category")
            #expect(
                try await failure(
                    app, "INSERT INTO transactions (ledger_id, id, category_id, title, amount, split) VALUES (1, 41, 7, 'Split', 1, true)")
                    == "transactions_split_shape")
            #expect(
                try await failure(
                    app,
                    "INSERT INTO transactions (ledger_id, id, category_id, account_id, title, amount, parent_id) VALUES (1, 41, 7, 3, 'Part', 1, 40)"
                ) == "transactions_part_shape")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == before)

            // Updates.
            #expect(try await failure(app, "UPDATE transactions SET category_id = NULL WHERE id = 40") == "transactions_account_or_category")
            // A split and its parts from psql, in one statement; then each breaking update. (Setting split on a row
            // without parts breaks the sum first, which its own constraint trigger reports.)
            #expect(
                try await failure(
                    app,
                    """
                    INSERT INTO transactions (ledger_id, id, account_id, category_id, title, amount, split, parent_id)
                    VALUES (1, 50, 3, NULL, 'Shop', 3, true, NULL), (1, 51, NULL, 7, 'Shop', 1, false, 50), (1, 52, NULL, 7, 'Shop', 2, false, 50)
                    """) == nil)
            #expect(try await failure(app, "UPDATE transactions SET category_id = 7 WHERE id = 50") == "transactions_split_shape")
            #expect(try await failure(app, "UPDATE transactions SET account_id = 3 WHERE id = 51") == "transactions_part_shape")
            #expect(try await app.scalar("SELECT category_id::text || split::text FROM transactions WHERE id = 40") == "7false")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE id = 50 AND category_id IS NULL") == "1")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE id = 51 AND account_id IS NULL") == "1")

            // Well-formed writes still pass: an account's transaction without a category, a title change.
            #expect(
                try await failure(app, "INSERT INTO transactions (ledger_id, id, account_id, title, amount) VALUES (1, 43, 3, 'Cash out', -5)")
                    == nil)
            #expect(try await failure(app, "UPDATE transactions SET title = 'Green tea' WHERE id = 40") == nil)
        }
    }

    @Test func theAPIStillAnswersEachRuleWithItsField() async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Food","amount":5}"#).status == 201)
            // The API refuses a transaction that counts nowhere before the database sees it.
            let nowhere = try await app.request("POST", "/transactions", json: #"{"title":"Nowhere","amount":1}"#)
            #expect(nowhere.status == 422 && nowhere.problemFields == ["categoryId"], "\(nowhere.text)")
            // PATCH taking the category away reaches the database's rule.
            let created = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"Tea","amount":2}"#)
            #expect(created.status == 201)
            let id = created.object["id"] as? Int ?? -1
            let patched = try await app.request("PATCH", "/transactions/\(id)", json: #"{"categoryId":null}"#)
            #expect(patched.status == 422 && patched.problemFields == ["categoryId"], "\(patched.text)")
            #expect(try await app.request("GET", "/transactions/\(id)").object["categoryId"] as? Int == 1)
        }
    }
}
