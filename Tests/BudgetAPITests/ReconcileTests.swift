import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport
import BudgetCore

/// `POST /accounts/{id}/reconcile` (docs/accounts.md, Reconciling): a matching statement balance reconciles
/// the cleared transactions up to its date, a differing one is a 409 that says by how much and changes
/// nothing, `adjust` books the difference first; a reconciled transaction's amount, date and account are
/// locked until its cleared state is set back. Real sockets, a real PostgreSQL.
@Suite struct ReconcileTests {
    /// Account 1 Checking, opened with 1000.00 on 2026-11-01, and four transactions in it: 1 Rent 400.00
    /// cleared, 2 Salary −2000.00 (money in) cleared, 3 Coffee 4.50 uncleared, 4 Later 10.00 cleared but
    /// dated after November. Its cleared balance on 2026-11-30 is 1000 − (400 − 2000) = 2600.00.
    static func withAccount(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with { app in
            try await Self.fill(app)
            try await body(app)
        }
    }

    static func fill(_ app: TestApp, headers: [(String, String)] = []) async throws {
        let account = try await app.request(
            "POST", "/accounts", json: #"{"name":"Checking","type":"checking","openingBalance":"1000.00","openedOn":"2026-11-01"}"#, headers: headers)
        #expect(account.status == 201, "\(account.text)")
        let accountID = try #require(account.object["id"] as? Int)
        for transaction in [
            #"{"title":"Rent","amount":"400.00","date":"2026-11-03","cleared":"cleared"}"#,
            #"{"title":"Salary","amount":"-2000.00","date":"2026-11-05","cleared":"cleared"}"#,
            #"{"title":"Coffee","amount":"4.50","date":"2026-11-06"}"#,
            #"{"title":"Later","amount":"10.00","date":"2026-12-02","cleared":"cleared"}"#,
        ] {
            let created = try await app.request(
                "POST", "/transactions", json: "{\"accountId\":\(accountID)," + transaction.dropFirst(), headers: headers)
            #expect(created.status == 201, "\(transaction): \(created.text)")
        }
    }

    /// Each transaction's cleared state and version, in id order: what a refused reconcile must leave alone.
    static func states(_ app: TestApp) async throws -> String? {
        try await app.scalar("SELECT string_agg(id || ':' || cleared || ':' || version, ' ' ORDER BY id) FROM transactions")
    }

    static func reconcile(_ app: TestApp, _ body: String, account: Int = 1) async throws -> TestResponse {
        try await app.request("POST", "/accounts/\(account)/reconcile", json: body)
    }

    @Test func aMatchingBalanceReconcilesTheClearedTransactionsUpToItsDate() async throws {
        try await Self.withAccount { app in
            let reconciled = try await Self.reconcile(app, #"{"balance":"2600.00","date":"2026-11-30"}"#)
            #expect(reconciled.status == 200, "\(reconciled.text)")
            let account = try await app.request("GET", "/accounts/1")
            #expect(reconciled.text == account.text, "the account as GET /accounts/1 renders it")
            // RFC 9110 §8.7: Content-Location names that resource, and the ETag is the one its GET gives.
            #expect(reconciled.header("Content-Location") == "/accounts/1")
            #expect(reconciled.header("ETag") != nil && reconciled.header("ETag") == account.header("ETag"))
            #expect(reconciled.object["lastReconciledAt"] is String, "\(reconciled.text)")
            #expect(reconciled.object["version"] as? Int == 2)
            // Rent and Salary: reconciled; Coffee is not cleared, Later is after the statement.
            #expect(try await Self.states(app) == "1:reconciled:2 2:reconciled:2 3:uncleared:1 4:cleared:1")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "4", "no adjustment when the balance matches")
            #expect(try await app.request("GET", "/transactions/1").object["cleared"] as? String == "reconciled")
        }
    }

    @Test func aDifferentBalanceIs409WithTheDifferenceAndChangesNothing() async throws {
        try await Self.withAccount { app in
            let before = try await Self.states(app)
            let refused = try await Self.reconcile(app, #"{"balance":2650,"date":"2026-11-30"}"#)
            #expect(refused.status == 409, "\(refused.text)")
            #expect(refused.header("Content-Type") == "application/problem+json")
            // Money as every answer writes it: a JSON number with two decimals, balance − cleared balance.
            #expect(refused.text.contains(#""difference":50.00"#) && refused.text.contains(#""clearedBalance":2600.00"#), "\(refused.text)")
            #expect(refused.problemFields == ["balance"])
            let short = try await Self.reconcile(app, #"{"balance":"2599.99","date":"2026-11-30"}"#)
            #expect(short.status == 409 && short.text.contains(#""difference":-0.01"#), "\(short.text)")
            #expect(try await Self.states(app) == before)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "4")
            #expect(try await app.scalar("SELECT last_reconciled_at IS NULL AND version = 1 FROM accounts WHERE id = 1") == "t")
        }
    }

    @Test func adjustBooksOneReconciledAdjustmentThenReconciles() async throws {
        try await Self.withAccount { app in
            let adjusted = try await Self.reconcile(app, #"{"balance":"2650.00","date":"2026-11-30","adjust":true}"#)
            #expect(adjusted.status == 200, "\(adjusted.text)")
            #expect(adjusted.object["lastReconciledAt"] is String)
            #expect(adjusted.text == (try await app.request("GET", "/accounts/1").text))
            // Cleared was 2600.00, the statement says 2650.00: 50.00 came in (a negative amount), with no category.
            let adjustment = try await app.scalar(
                """
                SELECT amount || ' ' || date || ' ' || cleared || ' ' || (category_id IS NULL) || ' ' || account_id || ' ' || title
                FROM transactions WHERE id NOT IN (1, 2, 3, 4)
                """)
            #expect(adjustment == "-50.00 2026-11-30 reconciled true 1 Reconciliation balance adjustment")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "5")
            #expect(
                try await app.scalar("SELECT string_agg(cleared, ' ' ORDER BY id) FROM transactions WHERE id <= 4")
                    == "reconciled reconciled uncleared cleared")
            // The account's cleared balance is now the statement's (Later, cleared in December, counts in it too).
            #expect(adjusted.text.contains(#""clearedBalance":2640.00,"#), "\(adjusted.text)")

            // The same statement again matches without adjusting; adjust with nothing to adjust books nothing.
            #expect(try await Self.reconcile(app, #"{"balance":"2650.00","date":"2026-11-30"}"#).status == 200)
            #expect(try await Self.reconcile(app, #"{"balance":"2640.00","date":"2026-12-31","adjust":true}"#).status == 200)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "5")
            #expect(try await app.scalar("SELECT cleared FROM transactions WHERE id = 4") == "reconciled")
        }
    }

    @Test func aReconciledTransactionIsLockedUntilItsClearedStateIsSetBack() async throws {
        try await Self.withAccount { app in
            #expect(try await Self.reconcile(app, #"{"balance":"2600.00","date":"2026-11-30"}"#).status == 200)
            let locked = try await app.request("PATCH", "/transactions/1", json: #"{"amount":"450.00"}"#)
            #expect(locked.status == 409 && locked.problemFields == ["amount"], "\(locked.text)")
            #expect(locked.text.contains("reconciled"))
            // The 409 names the locked member the write changed.
            let date = try await app.request("PATCH", "/transactions/1", json: #"{"date":"2026-11-04"}"#)
            #expect(date.status == 409 && date.problemFields == ["date"], "\(date.text)")
            let account = try await app.request("PATCH", "/transactions/1", json: #"{"accountId":null,"categoryId":1}"#)
            #expect(account.status == 409 && account.problemFields == ["accountId"], "\(account.text)")
            #expect(
                try await app.request("PUT", "/transactions/1", json: #"{"accountId":1,"title":"Rent","amount":"401.00","date":"2026-11-03"}"#).status
                    == 409)
            #expect(try await app.scalar("SELECT amount || ' ' || date || ' ' || version FROM transactions WHERE id = 1") == "400.00 2026-11-03 2")

            // The title and note are not locked.
            #expect(try await app.request("PATCH", "/transactions/1", json: #"{"title":"Rent (November)"}"#).status == 200)
            let unlocked = try await app.request("PATCH", "/transactions/1", json: #"{"cleared":"cleared"}"#)
            #expect(unlocked.status == 200 && unlocked.object["cleared"] as? String == "cleared", "\(unlocked.text)")
            let changed = try await app.request("PATCH", "/transactions/1", json: #"{"amount":"450.00"}"#)
            #expect(changed.status == 200 && changed.text.contains(#""amount":450.00,"#), "\(changed.text)")
            // Setting it back and changing the amount in one write is allowed too.
            #expect(try await Self.reconcile(app, #"{"balance":"2550.00","date":"2026-11-30"}"#).status == 200)
            let both = try await app.request("PATCH", "/transactions/2", json: #"{"cleared":"cleared","amount":"-2100.00"}"#)
            #expect(both.status == 200, "\(both.text)")
        }
    }

    @Test func aClosedAccountReconciles() async throws {
        try await Self.withAccount { app in
            let closed = try await app.request("PATCH", "/accounts/1", json: #"{"closed":true}"#)
            #expect(closed.status == 200, "\(closed.text)")
            let reconciled = try await Self.reconcile(app, #"{"balance":"2600.00","date":"2026-11-30"}"#)
            #expect(reconciled.status == 200, "\(reconciled.text)")
            #expect(reconciled.object["closed"] as? Bool == true && reconciled.object["lastReconciledAt"] is String)
            #expect(try await Self.states(app) == "1:reconciled:2 2:reconciled:2 3:uncleared:1 4:cleared:1")
        }
    }

    @Test(arguments: [
        (#"{"balance":"2600.00","date":"2026-11-31"}"#, 400, ["date"]),
        (#"{"balance":"2600.00","date":"30/11/2026"}"#, 400, ["date"]),
        (#"{"balance":"2600.00","date":20261130}"#, 400, ["date"]),
        (#"{"balance":"lots","date":"2026-11-30"}"#, 422, ["balance"]),
        (#"{"balance":"2600.001","date":"2026-11-30"}"#, 422, ["balance"]),
        (#"{"date":"2026-11-30"}"#, 422, ["balance"]),
        (#"{"balance":"2600.00"}"#, 422, ["date"]),
        (#"{"balance":"2600.00","date":"2026-11-30","adjust":"yes"}"#, 422, ["adjust"]),
        (#"{"balance":"2600.00","date":"2026-11-30","memo":"x"}"#, 422, ["memo"]),
    ])
    func badInputIsRefusedAndChangesNothing(body: String, status: Int, fields: [String]) async throws {
        try await Self.withAccount { app in
            let before = try await Self.states(app)
            let answer = try await Self.reconcile(app, body)
            #expect(answer.status == status && answer.problemFields == fields, "\(body): \(answer.status) \(answer.text)")
            #expect(try await Self.states(app) == before)
            #expect(try await app.scalar("SELECT last_reconciled_at IS NULL FROM accounts WHERE id = 1") == "t")
        }
    }

    /// A difference no transaction amount can hold (numeric(14,2)) is the balance's fault: 422, nothing written.
    @Test func anAdjustmentTooLargeToBookIs422() async throws {
        try await TestApp.with { app in
            let account = try await app.request("POST", "/accounts", json: #"{"name":"Vault","type":"savings","openingBalance":"999999999999.00"}"#)
            #expect(account.status == 201, "\(account.text)")
            let answer = try await Self.reconcile(app, #"{"balance":"-999999999999.00","date":"2026-11-30","adjust":true}"#)
            #expect(answer.status == 422 && answer.problemFields == ["balance"], "\(answer.status) \(answer.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
            #expect(try await app.scalar("SELECT last_reconciled_at IS NULL FROM accounts") == "t")
        }
    }

    @Test func aMissingAccountIs404() async throws {
        try await Self.withAccount { app in
            let missing = try await Self.reconcile(app, #"{"balance":"0.00","date":"2026-11-30","adjust":true}"#, account: 9)
            #expect(missing.status == 404, "\(missing.text)")
            #expect(try await app.request("POST", "/accounts/x/reconcile", json: #"{"balance":"0.00","date":"2026-11-30"}"#).status == 400)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "4", "no adjustment for an account that is not there")
        }
    }

    /// Another ledger's account 1 is not found, and reconciling one's own account 1 leaves the other's alone.
    @Test func anotherLedgersAccountIs404() async throws {
        try await TestApp.with(options: HouseholdsTests.options()) { app in
            _ = try await HouseholdsTests.signUp(app, "alice")
            let (alice, _) = try await HouseholdsTests.logIn(app, "alice")
            try await Self.fill(app, headers: HouseholdsTests.bearer(alice))
            _ = try await HouseholdsTests.signUp(app, "bob")
            let (bob, _) = try await HouseholdsTests.logIn(app, "bob")
            let bobLedger = try #require(try await app.request("GET", "/ledgers", headers: HouseholdsTests.bearer(bob)).array.first?["id"] as? Int)

            let alices = try await app.request(
                "POST", "/accounts/1/reconcile", json: #"{"balance":"0.00","date":"2026-11-30","adjust":true}"#,
                headers: HouseholdsTests.bearer(bob))
            #expect(alices.status == 404, "\(alices.text)")
            // Bob's own account 1, chosen by id, sits beside Alice's.
            let own = try await app.request(
                "PUT", "/ledgers/\(bobLedger)/accounts/1", json: #"{"name":"Bob's","type":"checking"}"#,
                headers: HouseholdsTests.bearer(bob))
            #expect(own.status == 201, "\(own.text)")
            let reconciled = try await app.request(
                "POST", "/ledgers/\(bobLedger)/accounts/1/reconcile", json: #"{"balance":"0.00","date":"2026-11-30"}"#,
                headers: HouseholdsTests.bearer(bob))
            #expect(reconciled.status == 200 && reconciled.object["name"] as? String == "Bob's", "\(reconciled.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE ledger_id <> 1") == "0")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE cleared = 'reconciled'") == "0")
            #expect(try await app.scalar("SELECT last_reconciled_at IS NULL FROM accounts WHERE ledger_id = 1 AND id = 1") == "t")
        }
    }

    /// Reconciles of one account take turns (its row is locked, in a REPEATABLE READ transaction that runs
    /// again when it loses): three at once with `adjust` book the difference once, and the two later ones
    /// find the balance already matching.
    @Test func concurrentAdjustingReconcilesBookOneAdjustment() async throws {
        try await Self.withAccount { app in
            let body = #"{"balance":"2650.00","date":"2026-11-30","adjust":true}"#
            async let first = Self.reconcile(app, body)
            async let second = Self.reconcile(app, body)
            async let third = Self.reconcile(app, body)
            let answers = try await [first, second, third]
            #expect(answers.map(\.status) == [200, 200, 200], "\(answers.map(\.text))")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE title = 'Reconciliation balance adjustment'") == "1")
            #expect(try await app.scalar("SELECT version FROM accounts WHERE id = 1") == "4", "each reconcile stamped the account once")
        }
    }

    @Test func aReconcileInAFailedBatchIsRolledBack() async throws {
        try await Self.withAccount { app in
            let failed = try await app.request(
                "POST", "/batch",
                json: #"""
                    {"atomic":true,"operations":[
                     {"method":"POST","path":"/accounts/1/reconcile","body":{"balance":"2650.00","date":"2026-11-30","adjust":true}},
                     {"method":"POST","path":"/accounts/1/reconcile","body":{"balance":"1.00","date":"2026-11-30"}}]}
                    """#)
            #expect(failed.status == 409 && failed.object["operation"] as? Int == 1, "\(failed.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "4")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE cleared = 'reconciled'") == "0")
            let key = [("Idempotency-Key", "reconcile-1")]
            let first = try await app.request(
                "POST", "/accounts/1/reconcile", json: #"{"balance":"2650.00","date":"2026-11-30","adjust":true}"#, headers: key)
            let again = try await app.request(
                "POST", "/accounts/1/reconcile", json: #"{"balance":"2650.00","date":"2026-11-30","adjust":true}"#, headers: key)
            #expect(first.status == 200 && again.header("Idempotent-Replayed") == "true" && again.text == first.text, "\(first.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "5", "one adjustment for one key")
        }
    }
}
