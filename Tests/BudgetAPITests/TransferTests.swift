import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport
import BudgetCore

/// `POST /transfers` (docs/accounts.md, Transfers): two transactions naming each other, written in one
/// statement, kept in step by migrations/0018's triggers whichever side is edited, and deleted together; every
/// invalid member named at once with nothing written; another ledger's accounts unknown. Real sockets, a real
/// PostgreSQL.
@Suite struct TransferTests {
    /// Account 1 Checking and 2 Savings (on budget), 3 Mortgage (a loan) and 4 Brokerage (an investment),
    /// both off budget by their type; category 1 Housing.
    static func withAccounts(options: BudgetApp.Options = BudgetApp.Options(), _ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with(options: options) { app in
            try await Self.createAccounts(app)
            try await body(app)
        }
    }

    static func createAccounts(_ app: TestApp, headers: [(String, String)] = []) async throws {
        for account in [
            #"{"name":"Checking","type":"checking"}"#, #"{"name":"Savings","type":"savings"}"#,
            #"{"name":"Mortgage","type":"loan"}"#, #"{"name":"Brokerage","type":"investment"}"#,
        ] {
            let created = try await app.request("POST", "/accounts", json: account, headers: headers)
            #expect(created.status == 201, "\(account): \(created.text)")
        }
        let category = try await app.request("POST", "/categories", json: #"{"title":"Housing","amount":1500}"#, headers: headers)
        #expect(category.status == 201, "\(category.text)")
    }

    /// The two sides a 201 answered, read back with GET: the answer must be exactly `{"from":GET,"to":GET}`.
    static func sides(_ created: TestResponse, app: TestApp) async throws -> (from: TestResponse, to: TestResponse) {
        let from = try #require(created.object["from"] as? [String: Any])
        let to = try #require(created.object["to"] as? [String: Any])
        let fromRead = try await app.request("GET", "/transactions/\(try #require(from["id"] as? Int))")
        let toRead = try await app.request("GET", "/transactions/\(try #require(to["id"] as? Int))")
        #expect(fromRead.status == 200 && toRead.status == 200)
        #expect(created.text == #"{"from":\#(fromRead.text),"to":\#(toRead.text)}"#)
        return (fromRead, toRead)
    }

    static func count(_ app: TestApp) async throws -> String? {
        try await app.scalar("SELECT count(*) FROM transactions")
    }

    // MARK: Writing both sides

    @Test func betweenTwoOnBudgetAccountsBothSidesNameEachOther() async throws {
        try await Self.withAccounts { app in
            let created = try await app.request(
                "POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":2,"amount":"250.00","date":"2026-11-20"}"#)
            #expect(created.status == 201, "\(created.text)")
            let (from, to) = try await Self.sides(created, app: app)
            let fromID = try #require(from.object["id"] as? Int)
            let toID = try #require(to.object["id"] as? Int)
            #expect(created.header("Location") == "/transactions/\(fromID)")
            #expect(fromID != toID)
            #expect(from.object["transferId"] as? Int == toID && to.object["transferId"] as? Int == fromID)
            #expect(from.object["accountId"] as? Int == 1 && to.object["accountId"] as? Int == 2)
            // Money out of Checking is positive, money into Savings negative (docs/accounts.md, Money rules).
            #expect(from.text.contains(#""amount":250.00,"#) && to.text.contains(#""amount":-250.00,"#))
            #expect(from.object["categoryId"] is NSNull && to.object["categoryId"] is NSNull)
            #expect(from.object["title"] as? String == "Transfer to Savings" && to.object["title"] as? String == "Transfer from Checking")
            #expect(from.object["date"] as? String == "2026-11-20" && to.object["date"] as? String == "2026-11-20")
            #expect(from.object["cleared"] as? String == "uncleared")
            #expect(try await Self.count(app) == "2")
            #expect(try await app.request("GET", "/accounts/1").text.contains(#""balance":-250.00,"#))
            #expect(try await app.request("GET", "/accounts/2").text.contains(#""balance":250.00,"#))

            // A title and a note go on both sides; no date is today.
            let named = try await app.request(
                "POST", "/transfers", json: #"{"fromAccountId":2,"toAccountId":1,"amount":5,"title":"Back","note":"oops"}"#)
            #expect(named.status == 201, "\(named.text)")
            let (back, forth) = try await Self.sides(named, app: app)
            #expect(back.object["title"] as? String == "Back" && forth.object["title"] as? String == "Back")
            #expect(back.object["note"] as? String == "oops" && forth.object["note"] as? String == "oops")
            let today = try #require(try await app.scalar("SELECT (now() AT TIME ZONE 'UTC')::date::text"))
            #expect(back.object["date"] as? String == today)
            // null says "none", as on a transaction.
            let nulls = try await app.request(
                "POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":2,"amount":1,"categoryId":null,"note":null}"#)
            #expect(nulls.status == 201, "\(nulls.text)")
            #expect(try await Self.count(app) == "6")
        }
    }

    @Test func anOffBudgetSideTakesTheCategoryByDirection() async throws {
        try await Self.withAccounts { app in
            // On budget → off budget: spending, so a category is required, and it goes on the on-budget side.
            let uncategorised = try await app.request("POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":3,"amount":"1200.00"}"#)
            #expect(uncategorised.status == 422 && uncategorised.problemFields == ["categoryId"], "\(uncategorised.text)")
            #expect(uncategorised.header("Content-Type") == "application/problem+json")
            #expect(try await Self.count(app) == "0")
            let payment = try await app.request(
                "POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":3,"amount":"1200.00","categoryId":1,"date":"2026-11-01"}"#)
            #expect(payment.status == 201, "\(payment.text)")
            let (paid, owed) = try await Self.sides(payment, app: app)
            #expect(paid.object["categoryId"] as? Int == 1 && owed.object["categoryId"] is NSNull)
            #expect(paid.object["title"] as? String == "Transfer to Mortgage")
            #expect(try await app.request("GET", "/categories/1?month=2026-11").text.contains(#""spent":1200.00"#))

            // Off budget → on budget: a category is optional, and lands on the on-budget (to) side.
            let income = try await app.request("POST", "/transfers", json: #"{"fromAccountId":4,"toAccountId":1,"amount":300}"#)
            #expect(income.status == 201, "\(income.text)")
            let (sold, received) = try await Self.sides(income, app: app)
            #expect(sold.object["categoryId"] is NSNull && received.object["categoryId"] is NSNull)
            let refund = try await app.request("POST", "/transfers", json: #"{"fromAccountId":3,"toAccountId":1,"amount":50,"categoryId":1}"#)
            #expect(refund.status == 201, "\(refund.text)")
            let (lent, refunded) = try await Self.sides(refund, app: app)
            #expect(lent.object["categoryId"] is NSNull && refunded.object["categoryId"] as? Int == 1)
            #expect(refunded.text.contains(#""amount":-50.00,"#))

            // Both off budget: no category.
            let offBudget = try await app.request("POST", "/transfers", json: #"{"fromAccountId":3,"toAccountId":4,"amount":1,"categoryId":1}"#)
            #expect(offBudget.status == 422 && offBudget.problemFields == ["categoryId"], "\(offBudget.text)")
            #expect(try await app.request("POST", "/transfers", json: #"{"fromAccountId":3,"toAccountId":4,"amount":1}"#).status == 201)
            #expect(try await Self.count(app) == "8")
        }
    }

    // MARK: Editing, deleting, the feed

    @Test func editingEitherSideMirrorsTheOther() async throws {
        try await Self.withAccounts { app in
            let created = try await app.request("POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":2,"amount":100,"date":"2026-11-20"}"#)
            let (from, to) = try await Self.sides(created, app: app)
            let fromPath = "/transactions/\(try #require(from.object["id"] as? Int))"
            let toPath = "/transactions/\(try #require(to.object["id"] as? Int))"

            // PATCH the to side's amount: the from side mirrors it.
            let patched = try await app.request("PATCH", toPath, json: #"{"amount":"-75.00"}"#)
            #expect(patched.status == 200, "\(patched.text)")
            var mirror = try await app.request("GET", fromPath)
            #expect(mirror.text.contains(#""amount":75.00,"#) && mirror.object["version"] as? Int == 2, "\(mirror.text)")

            // PATCH the from side's date: the to side moves too.
            #expect(try await app.request("PATCH", fromPath, json: #"{"date":"2026-11-21"}"#).status == 200)
            mirror = try await app.request("GET", toPath)
            #expect(mirror.object["date"] as? String == "2026-11-21" && mirror.text.contains(#""amount":-75.00,"#), "\(mirror.text)")

            // PUT either side: amount and date mirrored, the transfer kept.
            let replaced = try await app.request(
                "PUT", toPath, json: #"{"accountId":2,"categoryId":null,"title":"Savings","amount":"-60.00","date":"2026-11-22"}"#)
            #expect(replaced.status == 200, "\(replaced.text)")
            mirror = try await app.request("GET", fromPath)
            #expect(mirror.text.contains(#""amount":60.00,"#) && mirror.object["date"] as? String == "2026-11-22", "\(mirror.text)")
            #expect(replaced.object["transferId"] as? Int == from.object["id"] as? Int)
            let fromAgain = try await app.request(
                "PUT", fromPath, json: #"{"accountId":1,"categoryId":null,"title":"Out","amount":"61.00","date":"2026-11-23"}"#)
            #expect(fromAgain.status == 200, "\(fromAgain.text)")
            mirror = try await app.request("GET", toPath)
            #expect(mirror.text.contains(#""amount":-61.00,"#) && mirror.object["date"] as? String == "2026-11-23", "\(mirror.text)")
            #expect(mirror.object["title"] as? String == "Savings", "a title is each side's own")
            #expect(try await app.request("GET", "/accounts/1").text.contains(#""balance":-61.00,"#))
            #expect(try await app.request("GET", "/accounts/2").text.contains(#""balance":61.00,"#))
        }
    }

    @Test func deletingOneSideDeletesBothWithTombstones() async throws {
        try await Self.withAccounts { app in
            let created = try await app.request("POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":2,"amount":10}"#)
            let (from, to) = try await Self.sides(created, app: app)
            let fromID = try #require(from.object["id"] as? Int)
            let toID = try #require(to.object["id"] as? Int)
            let before = try await app.changes()

            let deleted = try await app.request("DELETE", "/transactions/\(toID)")
            #expect(deleted.status == 200 && deleted.text == to.text, "\(deleted.text)")
            #expect(try await app.request("GET", "/transactions/\(fromID)").status == 404)
            #expect(try await Self.count(app) == "0")
            let after = try await app.changes("since=\(before.lastSeq)")
            let tombstones = after.changes.filter { $0["op"] as? String == "delete" }
            #expect(
                Set(tombstones.map { "\($0["collection"] ?? "")/\($0["id"] ?? "")" }) == ["transactions/\(fromID)", "transactions/\(toID)"],
                "\(after.changes)")
        }
    }

    @Test func bothSidesArriveInOneFeedPage() async throws {
        try await Self.withAccounts { app in
            let start = try await app.changes()
            let created = try await app.request("POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":3,"amount":"99.99","categoryId":1}"#)
            let (from, to) = try await Self.sides(created, app: app)
            let page = try await app.changes("since=\(start.lastSeq)&collection=transactions")
            let reads = Dictionary(uniqueKeysWithValues: [from, to].map { ($0.object["id"] as? Int ?? 0, $0) })
            #expect(Set(page.changes.compactMap { $0["id"] as? Int }) == Set(reads.keys) && page.changes.count == 2, "\(page.changes)")
            #expect(page.hasMore == false)
            for change in page.changes {
                let read = try #require(reads[change["id"] as? Int ?? 0])
                #expect(change["op"] as? String == "upsert")
                let data = try JSONSerialization.data(withJSONObject: change["data"] as Any, options: .sortedKeys)
                let record = try JSONSerialization.data(withJSONObject: read.object, options: .sortedKeys)
                #expect(data == record)
                #expect(change["etag"] as? String == read.header("ETag"))
            }
        }
    }

    // MARK: Refusals

    @Test(arguments: [
        (#"{}"#, ["fromAccountId", "toAccountId", "amount"]),
        (#"{"fromAccountId":1,"toAccountId":1,"amount":5}"#, ["toAccountId"]),
        (#"{"fromAccountId":9,"toAccountId":2,"amount":5}"#, ["fromAccountId"]),
        (#"{"fromAccountId":1,"toAccountId":9,"amount":5}"#, ["toAccountId"]),
        (#"{"fromAccountId":8,"toAccountId":9,"amount":5}"#, ["fromAccountId", "toAccountId"]),
        (#"{"fromAccountId":1,"toAccountId":2,"amount":0}"#, ["amount"]),
        (#"{"fromAccountId":1,"toAccountId":2,"amount":"-5.00"}"#, ["amount"]),
        (#"{"fromAccountId":1,"toAccountId":2,"amount":"1.005"}"#, ["amount"]),
        (#"{"fromAccountId":1,"toAccountId":2,"amount":"ten"}"#, ["amount"]),
        (#"{"fromAccountId":1,"toAccountId":2,"amount":5,"categoryId":1}"#, ["categoryId"]),
        (#"{"fromAccountId":1,"toAccountId":3,"amount":5}"#, ["categoryId"]),
        (#"{"fromAccountId":1,"toAccountId":3,"amount":5,"categoryId":null}"#, ["categoryId"]),
        (#"{"fromAccountId":1,"toAccountId":3,"amount":5,"categoryId":7}"#, ["categoryId"]),
        (#"{"fromAccountId":3,"toAccountId":4,"amount":5,"categoryId":1}"#, ["categoryId"]),
        (#"{"fromAccountId":1,"toAccountId":2,"amount":5,"date":"2026-02-30"}"#, ["date"]),
        (
            #"{"payee":"Bank","fromAccountId":0,"toAccountId":9,"amount":"1.001","date":"tomorrow","title":"","note":5,"categoryId":-1}"#,
            ["payee", "fromAccountId", "toAccountId", "amount", "date", "title", "note", "categoryId"]
        ),
    ])
    func invalidTransfersAre422AndWriteNothing(body: String, fields: [String]) async throws {
        try await Self.withAccounts { app in
            let answer = try await app.request("POST", "/transfers", json: body)
            #expect(answer.status == 422, "\(body): \(answer.text)")
            #expect(answer.header("Content-Type") == "application/problem+json")
            #expect(answer.problemFields == fields, "\(body): \(answer.text)")
            #expect(try await Self.count(app) == "0")
            _ = try await app.scalar("SELECT advance_change_feed(1000000)")
            #expect(try await app.scalar("SELECT count(*) FROM change_log WHERE collection = 'transactions'") == "0")
        }
    }

    @Test func onlyPostIsAllowed() async throws {
        try await Self.withAccounts { app in
            for method in ["GET", "PUT", "PATCH", "DELETE"] {
                let answer = try await app.request(method, "/transfers", json: method == "GET" || method == "DELETE" ? nil : "{}")
                #expect(answer.status == 405 && answer.header("Allow") == "POST", "\(method): \(answer.status) \(answer.text)")
            }
        }
    }

    /// Ids are per ledger: the other ledger's account 1 is not this ledger's, whoever asks and however the
    /// path names the ledger; a transfer under `/ledgers/{L}` writes into L and says so in `Location`.
    @Test func anotherLedgersAccountIsUnknown() async throws {
        try await TestApp.with(options: HouseholdsTests.options()) { app in
            _ = try await HouseholdsTests.signUp(app, "alice")
            let (alice, _) = try await HouseholdsTests.logIn(app, "alice")
            try await Self.createAccounts(app, headers: HouseholdsTests.bearer(alice))
            _ = try await HouseholdsTests.signUp(app, "bob")
            let (bob, _) = try await HouseholdsTests.logIn(app, "bob")
            let bobLedger = try #require(try await app.request("GET", "/ledgers", headers: HouseholdsTests.bearer(bob)).array.first?["id"] as? Int)
            let wallet = try await app.request("POST", "/accounts", json: #"{"name":"Wallet","type":"cash"}"#, headers: HouseholdsTests.bearer(bob))
            let walletID = try #require(wallet.object["id"] as? Int)

            let intoAlices = try await app.request(
                "POST", "/transfers", json: #"{"fromAccountId":\#(walletID),"toAccountId":1,"amount":5}"#,
                headers: HouseholdsTests.bearer(bob))
            #expect(intoAlices.status == 422 && intoAlices.problemFields == ["toAccountId"], "\(intoAlices.text)")
            let fromAlices = try await app.request(
                "POST", "/ledgers/\(bobLedger)/transfers", json: #"{"fromAccountId":1,"toAccountId":\#(walletID),"amount":5}"#,
                headers: HouseholdsTests.bearer(bob))
            #expect(fromAlices.status == 422 && fromAlices.problemFields == ["fromAccountId"], "\(fromAlices.text)")
            let aliceAsked = try await app.request(
                "POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":\#(walletID),"amount":5}"#,
                headers: HouseholdsTests.bearer(alice))
            #expect(aliceAsked.status == 422 && aliceAsked.problemFields == ["toAccountId"], "\(aliceAsked.text)")
            #expect(try await Self.count(app) == "0")

            // Bob's own transfer, under his ledger's prefix, is his.
            let pocket = try await app.request("POST", "/accounts", json: #"{"name":"Pocket","type":"cash"}"#, headers: HouseholdsTests.bearer(bob))
            let pocketID = try #require(pocket.object["id"] as? Int)
            let own = try await app.request(
                "POST", "/ledgers/\(bobLedger)/transfers", json: #"{"fromAccountId":\#(walletID),"toAccountId":\#(pocketID),"amount":5}"#,
                headers: HouseholdsTests.bearer(bob))
            #expect(own.status == 201, "\(own.text)")
            #expect(own.header("Location")?.hasPrefix("/ledgers/\(bobLedger)/transactions/") == true, "\(own.header("Location") ?? "no Location")")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE ledger_id = \(bobLedger)") == "2")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE ledger_id = 1") == "0")
        }
    }

    // MARK: Keys and batches

    @Test func anIdempotencyKeyWritesOneTransfer() async throws {
        try await Self.withAccounts { app in
            let body = #"{"fromAccountId":1,"toAccountId":2,"amount":20,"date":"2026-11-02"}"#
            let key = [("Idempotency-Key", "transfer-1")]
            let first = try await app.request("POST", "/transfers", json: body, headers: key)
            let again = try await app.request("POST", "/transfers", json: body, headers: key)
            #expect(first.status == 201 && again.status == 201, "\(first.text) \(again.text)")
            #expect(again.header("Idempotent-Replayed") == "true" && again.text == first.text)
            #expect(again.header("Location") == first.header("Location"))
            #expect(try await Self.count(app) == "2")
            let other = try await app.request("POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":2,"amount":21}"#, headers: key)
            #expect(other.status == 422, "the same key with another body: \(other.text)")
        }
    }

    @Test func aBatchWritesTransfersAllOrNothing() async throws {
        try await Self.withAccounts { app in
            // The sequence is fresh, so the transfer's sides are transactions 1 (from) and 2 (to).
            let batch = try await app.request(
                "POST", "/batch",
                json: #"""
                    {"atomic":true,"operations":[
                     {"method":"POST","path":"/transfers","body":{"fromAccountId":1,"toAccountId":2,"amount":5}},
                     {"method":"PATCH","path":"/transactions/1","body":{"amount":7}}]}
                    """#)
            #expect(batch.status == 200, "\(batch.text)")
            let results = batch.object["results"] as? [[String: Any]] ?? []
            #expect(results.map { $0["status"] as? Int } == [201, 200])
            #expect((results.first?["headers"] as? [String: Any])?["Location"] as? String == "/transactions/1")
            #expect(try await app.request("GET", "/transactions/2").text.contains(#""amount":-7.00,"#))

            let failed = try await app.request(
                "POST", "/batch",
                json: #"""
                    {"atomic":true,"operations":[
                     {"method":"POST","path":"/transfers","body":{"fromAccountId":1,"toAccountId":2,"amount":5}},
                     {"method":"POST","path":"/transfers","body":{"fromAccountId":1,"toAccountId":3,"amount":5}}]}
                    """#)
            #expect(failed.status == 422 && failed.object["operation"] as? Int == 1, "\(failed.text)")
            #expect(try await Self.count(app) == "2", "the first operation's transfer was rolled back")
        }
    }

    // MARK: The database's refusals, translated (Errors/DatabaseErrors.swift)

    @Test func databaseRefusalsNameTheMember() async throws {
        try await Self.withAccounts { app in
            let created = try await app.request("POST", "/transfers", json: #"{"fromAccountId":1,"toAccountId":2,"amount":5}"#)
            let (from, _) = try await Self.sides(created, app: app)
            let fromPath = "/transactions/\(try #require(from.object["id"] as? Int))"

            let closeInstead = try await app.request("DELETE", "/accounts/1")
            #expect(closeInstead.status == 409 && closeInstead.problemFields == ["id"], "\(closeInstead.text)")
            #expect(closeInstead.text.contains("close it"))
            let unknownAccount = try await app.request("PATCH", fromPath, json: #"{"accountId":99}"#)
            #expect(unknownAccount.status == 422 && unknownAccount.problemFields == ["accountId"], "\(unknownAccount.text)")
            let nowhere = try await app.request("PATCH", fromPath, json: #"{"accountId":null}"#)
            #expect(nowhere.status == 422 && nowhere.problemFields == ["categoryId"], "\(nowhere.text)")
            #expect(try await app.request("GET", fromPath).text == from.text, "nothing changed")
            // An account without transactions still deletes.
            #expect(try await app.request("DELETE", "/accounts/4").status == 200)
        }
    }
}
