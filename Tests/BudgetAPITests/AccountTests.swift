import Foundation
import Testing
import APITestSupport

/// `accounts` (docs/accounts.md): REST, balances, the transaction members an account brings, nested routes,
/// what PUT keeps, deletion, the change feed, seed and export, and importing a statement into an account.
@Suite struct AccountTests {
    static func withAccounts(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with { app in
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Groceries","amount":400}"#).status == 201)
            let checking = try await app.request(
                "POST", "/accounts", json: #"{"name":"Checking","type":"checking","openingBalance":"1000.00","openedOn":"2026-10-31"}"#)
            #expect(checking.status == 201, "\(checking.text)")
            #expect(try await app.request("POST", "/accounts", json: #"{"name":"Car loan","type":"loan"}"#).status == 201)
            try await body(app)
        }
    }

    @Test func createReadUpdateAndDelete() async throws {
        try await Self.withAccounts { app in
            let checking = try await app.request("GET", "/accounts/1")
            let createdAt = try #require(checking.object["createdAt"] as? String)
            #expect(
                checking.text
                    == #"{"id":1,"name":"Checking","type":"checking","onBudget":true,"closed":false,"note":null,"openingBalance":1000.00,"openedOn":"2026-10-31","balance":1000.00,"clearedBalance":1000.00,"unclearedBalance":0.00,"lastReconciledAt":null,"createdAt":"\#(createdAt)","updatedAt":"\#(createdAt)","version":1}"#
            )
            let loan = try await app.request("GET", "/accounts/2")
            #expect(loan.object["onBudget"] as? Bool == false, "a loan is off budget unless told otherwise")
            #expect(loan.object["openingBalance"] as? Double == 0)

            let patched = try await app.request("PATCH", "/accounts/2", json: #"{"closed":true,"note":"paid off"}"#)
            #expect(patched.status == 200 && patched.object["closed"] as? Bool == true && patched.object["version"] as? Int == 2)
            let replaced = try await app.request("PUT", "/accounts/1", json: #"{"name":"Main checking","type":"checking"}"#)
            #expect(replaced.status == 200, "\(replaced.text)")
            #expect(replaced.object["openedOn"] as? String == "2026-10-31", "a PUT without openedOn keeps the stored day")
            #expect(replaced.object["openingBalance"] as? Double == 0, "a PUT is the whole record: the opening balance goes back to 0.00")
            let created = try await app.request("PUT", "/accounts/7", json: #"{"name":"Wallet","type":"cash","onBudget":false}"#)
            #expect(created.status == 201 && created.header("Location") == "/accounts/7" && created.object["onBudget"] as? Bool == false)

            #expect(try await app.request("GET", "/accounts?type=cash").array.map { $0["id"] as? Int } == [7])
            #expect(try await app.request("GET", "/accounts?closed=true").array.map { $0["id"] as? Int } == [2])
            #expect(try await app.request("GET", "/accounts?q=wallet").array.map { $0["id"] as? Int } == [7])

            let deleted = try await app.request("DELETE", "/accounts/7")
            #expect(deleted.status == 200 && deleted.text == created.text)
            #expect(try await app.request("GET", "/accounts/7").status == 404)
        }
    }

    @Test(arguments: [
        (#"{"name":"X","type":"piggybank"}"#, ["type"]),
        (#"{"type":"cash"}"#, ["name"]),
        (#"{"name":"","type":"cash"}"#, ["name"]),
        (#"{"name":"X","type":"cash","openingBalance":"1.005"}"#, ["openingBalance"]),
        (#"{"name":"X","type":"cash","openedOn":"2026-13-01"}"#, ["openedOn"]),
        (#"{"name":"X","type":"cash","onBudget":"yes"}"#, ["onBudget"]),
        (#"{"name":"X","type":"cash","balance":5,"colour":"red"}"#, ["colour"]),
    ])
    func invalidAccountsAre422AndWriteNothing(body: String, fields: [String]) async throws {
        try await TestApp.with { app in
            let answer = try await app.request("POST", "/accounts", json: body)
            #expect(answer.status == 422 && answer.problemFields == fields, "\(body): \(answer.text)")
            #expect(try await app.scalar("SELECT count(*) FROM accounts") == "0")
        }
    }

    @Test func namesAreUniqueIgnoringCase() async throws {
        try await Self.withAccounts { app in
            let second = try await app.request("POST", "/accounts", json: #"{"name":"CHECKING","type":"savings"}"#)
            #expect(second.status == 409 && second.problemFields == ["name"], "\(second.text)")
            #expect(try await app.scalar("SELECT count(*) FROM accounts") == "2")
        }
    }

    @Test func balancesFollowTheSignsOfAmounts() async throws {
        try await Self.withAccounts { app in
            // 1000.00 opening; 2500.00 salary in (cleared); 80.25 groceries out (uncleared); a 10.00 refund in.
            let salary = try await app.request(
                "POST", "/transactions",
                json: #"{"accountId":1,"title":"Salary","amount":"-2500.00","date":"2026-11-01","cleared":"cleared","payee":"Employer"}"#)
            #expect(salary.status == 201, "\(salary.text)")
            #expect(salary.object["categoryId"] is NSNull && salary.object["payee"] as? String == "Employer")
            #expect(
                try await app.request(
                    "POST", "/transactions", json: #"{"accountId":1,"categoryId":1,"title":"Food","amount":"80.25","date":"2026-11-02"}"#
                ).status == 201)
            let refund = try await app.request("POST", "/accounts/1/transactions", json: #"{"categoryId":1,"title":"Refund","amount":"-10.00"}"#)
            #expect(refund.status == 201 && refund.object["accountId"] as? Int == 1 && refund.object["cleared"] as? String == "uncleared")

            let account = try await app.request("GET", "/accounts/1").object
            #expect(account["balance"] as? Double == 3429.75)
            #expect(account["clearedBalance"] as? Double == 3500.00)
            #expect(account["unclearedBalance"] as? Double == -70.25)
            #expect(try await app.request("GET", "/accounts?balance_gt=3000").array.map { $0["id"] as? Int } == [1])
            #expect(
                try await app.scalar("SELECT balance || ' ' || cleared_balance || ' ' || uncleared_balance FROM account_balances WHERE id = 1")
                    == "3429.75 3500.00 -70.25")
            // The category counts its transactions as before, whatever account they are in.
            #expect(try await app.request("GET", "/categories/1").object["spent"] as? Double == 70.25)

            // `_expand=category` on a transaction without one: null, as openapi.yaml has it.
            let expanded = try await app.request("GET", "/transactions/\(salary.object["id"] as? Int ?? 0)?_expand=category")
            #expect(expanded.status == 200 && expanded.object["category"] is NSNull, "\(expanded.text)")
            let nested = try await app.request("GET", "/accounts/1/transactions?_sort=amount")
            #expect(nested.array.map { $0["title"] as? String } == ["Salary", "Refund", "Food"])
            #expect(try await app.request("GET", "/accounts/9/transactions").status == 404)
            #expect(try await app.request("POST", "/accounts/9/transactions", json: #"{"title":"x","amount":1}"#).status == 404)
        }
    }

    @Test func aTransactionNeedsAnAccountOrACategory() async throws {
        try await Self.withAccounts { app in
            let neither = try await app.request("POST", "/transactions", json: #"{"title":"x","amount":1}"#)
            #expect(neither.status == 422 && neither.problemFields == ["categoryId"], "\(neither.text)")
            let nullAccount = try await app.request("POST", "/transactions", json: #"{"accountId":null,"title":"x","amount":1}"#)
            #expect(nullAccount.status == 422 && nullAccount.problemFields == ["categoryId"], "\(nullAccount.text)")
            let nullCategory = try await app.request("POST", "/transactions", json: #"{"categoryId":null,"title":"x","amount":1}"#)
            #expect(nullCategory.status == 422 && nullCategory.problemFields == ["categoryId"], "\(nullCategory.text)")
            let missing = try await app.request("POST", "/transactions", json: #"{"accountId":9,"title":"x","amount":1}"#)
            #expect(missing.status == 422 && missing.problemFields == ["accountId"], "\(missing.text)")
            let unknownState = try await app.request("POST", "/transactions", json: #"{"accountId":1,"title":"x","amount":1,"cleared":"maybe"}"#)
            #expect(unknownState.status == 422 && unknownState.problemFields == ["cleared"], "\(unknownState.text)")
            let longPayee = String(repeating: "p", count: 201)
            let payee = try await app.request("POST", "/transactions", json: #"{"accountId":1,"title":"x","amount":1,"payee":"\#(longPayee)"}"#)
            #expect(payee.status == 422 && payee.problemFields == ["payee"], "\(payee.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")

            let created = try await app.request("POST", "/transactions", json: #"{"accountId":1,"title":"x","amount":1}"#)
            let location = try #require(created.header("Location"))
            let orphaned = try await app.request("PATCH", location, json: #"{"accountId":null}"#)
            #expect(orphaned.status == 422 && orphaned.problemFields == ["categoryId"], "\(orphaned.text)")
            #expect(try await app.scalar("SELECT account_id FROM transactions") == "1")
        }
    }

    @Test func putWithoutTheNewMembersKeepsThem() async throws {
        try await Self.withAccounts { app in
            let created = try await app.request(
                "POST", "/transactions", json: #"{"accountId":1,"categoryId":1,"title":"Food","amount":"12.00","cleared":"cleared","payee":"Shop"}"#)
            #expect(created.status == 201, "\(created.text)")
            // A client that predates accounts replaces the record with the members it knows.
            let replaced = try await app.request("PUT", "/transactions/1", json: #"{"categoryId":1,"title":"Food & drink","amount":"12.00"}"#)
            #expect(replaced.status == 200, "\(replaced.text)")
            #expect(
                replaced.object["accountId"] as? Int == 1 && replaced.object["cleared"] as? String == "cleared"
                    && replaced.object["payee"] as? String == "Shop")
            let cleared = try await app.request("PUT", "/transactions/1", json: #"{"categoryId":1,"title":"Food","amount":"12.00","payee":null}"#)
            #expect(cleared.object["payee"] is NSNull && cleared.object["accountId"] as? Int == 1)
        }
    }

    @Test func anAccountWithTransactionsIsClosedNotDeleted() async throws {
        try await Self.withAccounts { app in
            #expect(try await app.request("POST", "/accounts/1/transactions", json: #"{"title":"Cash out","amount":"20.00"}"#).status == 201)
            let refused = try await app.request("DELETE", "/accounts/1")
            #expect(refused.status == 409 && refused.problemFields == ["id"], "\(refused.text)")
            #expect(try await app.scalar("SELECT count(*) FROM accounts WHERE id = 1") == "1")
            let closed = try await app.request("PATCH", "/accounts/1", json: #"{"closed":true}"#)
            #expect(closed.status == 200 && closed.object["balance"] as? Double == 980.00)
            #expect(try await app.request("GET", "/accounts").array.count == 2, "closing hides nothing")
        }
    }

    @Test func accountsAreInTheChangeFeedAndSurviveExportAndSeed() async throws {
        try await Self.withAccounts { app in
            #expect(try await app.request("POST", "/transactions", json: #"{"id":5,"accountId":1,"title":"Out","amount":"100.00"}"#).status == 201)
            #expect(try await app.request("POST", "/transactions", json: #"{"id":6,"accountId":2,"title":"In","amount":"-100.00"}"#).status == 201)
            _ = try await app.scalar("UPDATE transactions SET transfer_id = CASE id WHEN 5 THEN 6 ELSE 5 END WHERE id IN (5, 6)")
            _ = try await app.scalar("UPDATE accounts SET last_reconciled_at = '2026-11-20T10:00:00Z' WHERE id = 1")
            _ = try await app.scalar("SELECT advance_change_feed(1000000)")
            #expect(try await app.scalar("SELECT count(*) FROM change_log WHERE collection = 'accounts'") == "2")

            let exported = try await app.export()
            #expect(exported.contains(#""accounts":[{"id":1,"name":"Checking""#), "\(exported)")
            #expect(exported.contains(#""lastReconciledAt":"2026-11-20T10:00:00"#), "\(exported)")
            #expect(exported.contains(#""transferId":6"#) && exported.contains(#""transferId":5"#))
            #expect(!exported.contains("balance\""), "derived balances are not exported")
            try await TestApp.with { second in
                try await second.seed(exported)
                #expect(try await second.export() == exported, "export → seed → export is unchanged")
                #expect(try await second.scalar("SELECT transfer_id FROM transactions WHERE id = 5") == "6")
            }
        }
    }

    @Test func anAccountAndItsTransactionsInOneAtomicBatchAndUnderAnIdempotencyKey() async throws {
        try await TestApp.with { app in
            let batch = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/accounts","body":{"id":40,"name":"Wallet","type":"cash","openingBalance":"50.00"}},
                      {"method":"POST","path":"/accounts/40/transactions","body":{"title":"Coffee","amount":"3.20"}},
                      {"method":"PATCH","path":"/accounts/40","body":{"note":"pocket money"}}
                    ]}
                    """)
            #expect(batch.batchStatuses == [201, 201, 200], "\(batch.text)")
            #expect(batch.batchResults.last?.resultBody["balance"] as? Double == 46.80)
            let failing = try await app.request(
                "POST", "/batch",
                json: """
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/accounts","body":{"name":"Card","type":"credit"}},
                      {"method":"POST","path":"/transactions","body":{"accountId":99,"title":"x","amount":1}}
                    ]}
                    """)
            #expect(failing.status == 422 || failing.batchStatuses.last == 422, "\(failing.text)")
            #expect(try await app.scalar("SELECT count(*) FROM accounts") == "1", "the atomic batch rolled back whole")

            let key = [("Idempotency-Key", "\"open-savings\"")]
            let first = try await app.request("POST", "/accounts", json: #"{"name":"Savings","type":"savings"}"#, headers: key)
            let again = try await app.request("POST", "/accounts", json: #"{"name":"Savings","type":"savings"}"#, headers: key)
            #expect(
                first.status == 201 && again.status == 201 && again.text == first.text && again.header("Idempotent-Replayed") != nil,
                "\(again.status) \(again.text)")
            #expect(try await app.scalar("SELECT count(*) FROM accounts") == "2")
        }
    }

    @Test func aStatementImportsIntoAnAccount() async throws {
        try await Self.withAccounts { app in
            let csv =
                "date,title,amount,payee,category\n2026-11-03,Salary,2500.00,Employer,\n2026-11-04,Shop,-45.10,Market,Groceries\n2026-11-05,Fee,-2.00,,\n"
            let imported = try await app.send(
                "POST", "/accounts/1/transactions/import", headers: [("Content-Type", "text/csv")], body: Array(csv.utf8))
            #expect(imported.status == 201 && imported.object["created"] as? Int == 3, "\(imported.text)")
            let rows = try await app.request("GET", "/accounts/1/transactions?_sort=date").array
            #expect(rows.map { $0["amount"] as? Double } == [-2500.00, 45.10, 2.00], "money in is negative, money out positive")
            #expect(rows.map { $0["categoryId"] as? Int } == [nil, 1, nil])
            #expect(rows.map { $0["cleared"] as? String } == ["cleared", "cleared", "cleared"], "a statement's rows are what the bank has")
            #expect(rows.map { $0["payee"] as? String } == ["Employer", "Market", nil])

            // The same file again: every row a duplicate in this account; into another account: new rows.
            let again = try await app.importStatement(csv, query: "?accountId=1")
            #expect(again.status == 200 && again.object["duplicates"] as? Int == 3, "\(again.text)")
            let other = try await app.importStatement(csv, query: "?accountId=2&dryRun=true")
            #expect(other.object["created"] as? Int == 3, "import ids are unique per account: \(other.text)")

            // Without an account, a row still needs its category.
            let plain = try await app.importStatement(csv)
            #expect(plain.status == 422, "\(plain.text)")
            #expect(
                try await app.send("POST", "/accounts/9/transactions/import", headers: [("Content-Type", "text/csv")], body: Array(csv.utf8)).status
                    == 404)
            let missing = try await app.importStatement(csv, query: "?accountId=9")
            #expect(missing.status == 422 && missing.problemFields == ["accountId"], "\(missing.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "3")
        }
    }
}
