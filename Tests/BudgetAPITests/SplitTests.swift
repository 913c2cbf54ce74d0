import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

/// Split transactions (issue 31, docs/api.md): a parent that its account counts and parts that categories and
/// months count, written, replaced and deleted in one statement each; every invalid split a 422 naming the
/// member with nothing written; parts deleted only with their parent. Real sockets, a real PostgreSQL.
@Suite struct SplitTests {
    /// Account 1 Checking (opening balance 0) and categories 1 Groceries, 2 Household, 3 Gifts.
    static func withLedger(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with { app in
            let account = try await app.request("POST", "/accounts", json: #"{"name":"Checking","type":"checking"}"#)
            #expect(account.status == 201, "\(account.text)")
            for title in ["Groceries", "Household", "Gifts"] {
                let category = try await app.request("POST", "/categories", json: #"{"title":"\#(title)","amount":100}"#)
                #expect(category.status == 201, "\(category.text)")
            }
            try await body(app)
        }
    }

    /// The supermarket receipt: 60.00 out of Checking, 30.00 groceries, 20.00 household, 10.00 gifts.
    static let receipt = #"""
        {"title":"Supermarket","amount":"60.00","date":"2026-11-10","payee":"Market",
         "splits":[{"categoryId":1,"amount":"30.00","note":"food"},{"categoryId":2,"amount":20},{"categoryId":3,"amount":"10.00"}]}
        """#

    static func count(_ app: TestApp) async throws -> String? {
        try await app.scalar("SELECT count(*) FROM transactions")
    }

    /// Posts `receipt` into Checking and answers the parent's id and its parts' ids.
    static func postReceipt(_ app: TestApp, headers: [(String, String)] = []) async throws -> (parent: Int, parts: [Int]) {
        let created = try await app.request("POST", "/accounts/1/transactions", json: receipt, headers: headers)
        #expect(created.status == 201, "\(created.text)")
        let parent = try #require(created.object["id"] as? Int)
        let parts = try #require(created.object["splits"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
        return (parent, parts)
    }

    // MARK: Counting

    @Test func partsCountInCategoriesAndMonthsTheParentInItsAccount() async throws {
        try await Self.withLedger { app in
            let created = try await app.request("POST", "/accounts/1/transactions", json: Self.receipt)
            #expect(created.status == 201, "\(created.text)")
            let parent = try #require(created.object["id"] as? Int)
            #expect(created.header("Location") == "/transactions/\(parent)")
            let parts = try #require(created.object["splits"] as? [[String: Any]])
            let ids = parts.compactMap { $0["id"] as? Int }
            // The parts follow their parent's id, in the order they were sent.
            #expect(ids.count == 3 && ids == ids.sorted() && ids[0] > parent, "\(created.text)")
            #expect(
                created.text.contains(
                    #""transferId":null,"parentId":null,"splits":[{"id":\#(ids[0]),"categoryId":1,"amount":30.00,"note":"food"},"#
                        + #"{"id":\#(ids[1]),"categoryId":2,"amount":20.00,"note":null},{"id":\#(ids[2]),"categoryId":3,"amount":10.00,"note":null}],"#
                ), "\(created.text)")
            #expect(created.object["categoryId"] is NSNull && created.object["accountId"] as? Int == 1)
            // The answer is what a read answers, byte for byte.
            let read = try await app.request("GET", "/transactions/\(parent)")
            #expect(read.status == 200 && read.text == created.text, "\(read.text)")
            #expect(try await Self.count(app) == "4")
            // _expand and _embed render in SQL: the same bytes.
            let expanded = try await app.request("GET", "/transactions/\(parent)?_expand=category")
            #expect(expanded.text == String(read.text.dropLast()) + #","category":null}"#, "\(expanded.text)")
            let embedded = try await app.request("GET", "/categories/2?_embed=transactions")
            let part = try await app.request("GET", "/transactions/\(ids[1])")
            #expect(embedded.text.contains(#""transactions":[\#(part.text)]"#), "\(embedded.text)")

            // A part is a transaction in its category, dated, titled and paid as its parent, without an account.
            let groceries = try await app.request("GET", "/categories/1/transactions")
            let listed = try #require(groceries.json() as? [[String: Any]])
            #expect(listed.count == 1, "\(groceries.text)")
            #expect(listed.first?["id"] as? Int == ids[0] && listed.first?["parentId"] as? Int == parent)
            #expect(listed.first?["title"] as? String == "Supermarket" && listed.first?["date"] as? String == "2026-11-10")
            #expect(listed.first?["payee"] as? String == "Market" && listed.first?["accountId"] is NSNull)
            #expect(listed.first?["splits"] is NSNull && listed.first?["note"] as? String == "food")
            #expect(groceries.text.contains(#""amount":30.00,"#))
            // The list reads binary results and selects NULL for a category's splits; a record's read, text: the same bytes.
            let groceryPart = try await app.request("GET", "/transactions/\(ids[0])")
            #expect(groceries.text == "[" + groceryPart.text + "]", "\(groceries.text)")

            // Categories count the parts; the account counts the parent once.
            #expect(try await app.request("GET", "/categories/1?month=2026-11").text.contains(#""spent":30.00,"#))
            #expect(try await app.request("GET", "/categories/2?month=2026-11").text.contains(#""spent":20.00,"#))
            #expect(try await app.request("GET", "/categories/3?month=2026-11").text.contains(#""spent":10.00,"#))
            let account = try await app.request("GET", "/accounts/1")
            #expect(account.text.contains(#""balance":-60.00,"#), "\(account.text)")
            // The month counts the parts once, and the parent neither as income nor as uncategorised.
            let month = try await app.request("GET", "/months/2026-11")
            #expect(
                month.text.hasPrefix(#"{"month":"2026-11","budgeted":300.00,"spent":60.00,"#)
                    && month.text.contains(#""income":0.00,"uncategorised":0.00,"#),
                "\(month.text)")
            let rows = try #require(month.object["categories"] as? [[String: Any]])
            #expect(rows.map { $0["spent"] as? Double } == [30, 20, 10], "\(month.text)")

            // The parts are found by parentId; splits is neither a filter nor a sort key.
            let byParent = try await app.request("GET", "/transactions?parentId=\(parent)")
            #expect((try byParent.json() as? [[String: Any]])?.compactMap { $0["id"] as? Int } == ids)
            for query in ["splits=1", "splits_ne=1", "_sort=splits"] {
                let refused = try await app.request("GET", "/transactions?\(query)")
                #expect(refused.status == 400 && refused.text.contains("splits"), "\(query): \(refused.text)")
            }
            // CSV lists the two members too, the parts as their JSON in one cell.
            let csv = try await app.request("GET", "/transactions", headers: [("Accept", "text/csv")])
            #expect(csv.status == 200 && csv.text.hasPrefix("id,categoryId,category,title,amount,"), "\(csv.text.prefix(200))")
            #expect(csv.text.contains("transferId,parentId,splits,createdAt") && csv.text.contains(#""[{""id"":\#(ids[0]),""categoryId"":1,"#))
        }
    }

    // MARK: Bad splits

    @Test(arguments: [
        // Parts that do not add up: the detail says by how much.
        (
            "/transactions",
            #"{"accountId":1,"title":"S","amount":"60.00","splits":[{"categoryId":1,"amount":"30.00"},{"categoryId":2,"amount":"20.00"}]}"#,
            ["splits"]
        ),
        ("/transactions", #"{"accountId":1,"title":"S","amount":"6.00","splits":[{"categoryId":1,"amount":"6.00"}]}"#, ["splits"]),
        (
            "/transactions",
            #"{"accountId":1,"title":"S","amount":"6.00","splits":[{"categoryId":1,"amount":"3.00"},{"categoryId":99,"amount":"3.00"}]}"#,
            ["splits[1].categoryId"]
        ),
        (
            "/transactions",
            #"{"categoryId":1,"title":"S","amount":"6.00","splits":[{"categoryId":1,"amount":"3.00"},{"categoryId":2,"amount":"3.00"}]}"#,
            ["categoryId"]
        ),
        (
            "/transactions",
            #"{"accountId":1,"title":"S","amount":"6.00","splits":[{"amount":"3.00"},{"categoryId":2,"amount":"3.001","what":1}]}"#,
            ["splits[0].categoryId", "splits[1].what", "splits[1].amount"]
        ),
        ("/transactions", #"{"accountId":1,"title":"S","amount":"6.00","splits":{"categoryId":1}}"#, ["splits"]),
        (
            "/categories/1/transactions",
            #"{"title":"S","amount":"6.00","splits":[{"categoryId":1,"amount":"3.00"},{"categoryId":2,"amount":"3.00"}]}"#,
            ["splits"]
        ),
        (
            "/transactions",
            #"[{"categoryId":1,"title":"ok","amount":1},{"accountId":1,"title":"S","amount":"6.00","splits":[{"categoryId":1,"amount":"3.00"},{"categoryId":98,"amount":"3.00"}]}]"#,
            ["[1].splits[1].categoryId"]
        ),
    ])
    func badSplitsAre422NamingTheFieldAndWriteNothing(path: String, body: String, fields: [String]) async throws {
        try await Self.withLedger { app in
            let answer = try await app.request("POST", path, json: body)
            #expect(answer.status == 422, "\(body): \(answer.text)")
            #expect(answer.problemFields == fields, "\(body): \(answer.text)")
            #expect(try await Self.count(app) == "0")
        }
    }

    @Test func theSumErrorSaysTheDifference() async throws {
        try await Self.withLedger { app in
            let answer = try await app.request(
                "POST", "/transactions",
                json: #"{"accountId":1,"title":"S","amount":"60.00","splits":[{"categoryId":1,"amount":"30.00"},{"categoryId":2,"amount":"20.50"}]}"#)
            #expect(answer.status == 422 && answer.text.contains("difference of 9.50"), "\(answer.text)")
        }
    }

    // MARK: Editing

    @Test func putReplacesThePartsAndTheOldOnesAreGoneWithTombstones() async throws {
        try await Self.withLedger { app in
            let (parent, old) = try await Self.postReceipt(app)
            let since = try await app.changes().lastSeq
            let replaced = try await app.request(
                "PUT", "/transactions/\(parent)",
                json:
                    #"{"accountId":1,"title":"Market","amount":"60.00","date":"2026-11-11","splits":[{"categoryId":2,"amount":"45.00"},{"categoryId":3,"amount":"15.00"}]}"#
            )
            #expect(replaced.status == 200, "\(replaced.text)")
            let parts = try #require(replaced.object["splits"] as? [[String: Any]])
            let new = parts.compactMap { $0["id"] as? Int }
            #expect(new.count == 2 && Set(new).isDisjoint(with: old), "\(replaced.text)")
            #expect(replaced.text == (try await app.request("GET", "/transactions/\(parent)")).text)
            for id in old { #expect(try await app.request("GET", "/transactions/\(id)").status == 404) }
            // The new parts carry the parent's new title and date.
            let part = try await app.request("GET", "/transactions/\(new[0])")
            #expect(part.object["title"] as? String == "Market" && part.object["date"] as? String == "2026-11-11")
            #expect(try await app.request("GET", "/categories/1?month=2026-11").text.contains(#""spent":0.00,"#))
            #expect(try await app.request("GET", "/categories/2?month=2026-11").text.contains(#""spent":45.00,"#))
            // The feed carries a tombstone for every old part, and the new ones.
            let feed = try await app.changes("since=\(since)")
            let deleted = Set(feed.changes.filter { $0["op"] as? String == "delete" }.map { "\($0["id"]!)" })
            #expect(deleted == Set(old.map(String.init)), "\(feed.changes)")
            let upserted = Set(feed.changes.filter { $0["op"] as? String != "delete" }.map { "\($0["id"]!)" })
            #expect(upserted.isSuperset(of: Set((new + [parent]).map(String.init))), "\(feed.changes)")

            // A PUT without splits keeps the parts; splits: null makes it plain again.
            let kept = try await app.request("PUT", "/transactions/\(parent)", json: #"{"accountId":1,"title":"Market","amount":"60.00"}"#)
            #expect(kept.status == 200 && (kept.object["splits"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == new, "\(kept.text)")
            let plain = try await app.request(
                "PUT", "/transactions/\(parent)", json: #"{"accountId":1,"categoryId":1,"title":"Market","amount":"60.00","splits":null}"#)
            #expect(plain.status == 200 && plain.object["splits"] is NSNull && plain.object["categoryId"] as? Int == 1, "\(plain.text)")
            #expect(try await Self.count(app) == "1")
            #expect(try await app.request("GET", "/categories/1?month=2026-11").text.contains(#""spent":60.00,"#))
        }
    }

    @Test func patchesOfParentsAndParts() async throws {
        try await Self.withLedger { app in
            let (parent, parts) = try await Self.postReceipt(app)
            // The parent's amount alone breaks the sum; so does a part's.
            let parentAmount = try await app.request("PATCH", "/transactions/\(parent)", json: #"{"amount":"61.00"}"#)
            #expect(parentAmount.status == 422 && parentAmount.problemFields == ["amount"], "\(parentAmount.text)")
            let partAmount = try await app.request("PATCH", "/transactions/\(parts[0])", json: #"{"amount":"31.00"}"#)
            #expect(partAmount.status == 422 && partAmount.problemFields == ["amount"], "\(partAmount.text)")
            // Parts that do not add up to the stored amount: the database's check names splits.
            let short = try await app.request(
                "PATCH", "/transactions/\(parent)", json: #"{"splits":[{"categoryId":1,"amount":"1.00"},{"categoryId":2,"amount":"1.00"}]}"#)
            #expect(short.status == 422 && short.problemFields == ["splits"], "\(short.text)")
            #expect(try await app.request("GET", "/categories/1?month=2026-11").text.contains(#""spent":30.00,"#))

            // A part moves to another category, and takes a note.
            let moved = try await app.request("PATCH", "/transactions/\(parts[0])", json: #"{"categoryId":3,"note":"gift basket"}"#)
            #expect(moved.status == 200 && moved.object["categoryId"] as? Int == 3, "\(moved.text)")
            #expect(try await app.request("GET", "/categories/3?month=2026-11").text.contains(#""spent":40.00,"#))
            let parentRead = try await app.request("GET", "/transactions/\(parent)")
            #expect(parentRead.text.contains(#"{"id":\#(parts[0]),"categoryId":3,"amount":30.00,"note":"gift basket"}"#), "\(parentRead.text)")

            // The parent's title goes to its parts; amount and parts together are one write.
            let both = try await app.request(
                "PATCH", "/transactions/\(parent)",
                json: #"{"title":"Shop","amount":"10.00","splits":[{"categoryId":1,"amount":"4.00"},{"categoryId":2,"amount":"6.00"}]}"#)
            #expect(both.status == 200, "\(both.text)")
            let newParts = try #require(both.object["splits"] as? [[String: Any]]).compactMap { $0["id"] as? Int }
            #expect(newParts.count == 2)
            #expect(try await app.request("GET", "/transactions/\(newParts[1])").object["title"] as? String == "Shop")
            #expect(try await app.request("GET", "/accounts/1").text.contains(#""balance":-10.00,"#))
            // A transaction's own categoryId on a split is refused.
            let categorised = try await app.request("PATCH", "/transactions/\(parent)", json: #"{"categoryId":1}"#)
            #expect(categorised.status == 422 && categorised.problemFields == ["splits"], "\(categorised.text)")
        }
    }

    @Test func aPartIsDeletedOnlyWithItsParent() async throws {
        try await Self.withLedger { app in
            let (parent, parts) = try await Self.postReceipt(app)
            let refused = try await app.request("DELETE", "/transactions/\(parts[1])")
            #expect(refused.status == 409 && refused.text.contains("parent"), "\(refused.text)")
            #expect(try await Self.count(app) == "4")
            // In a batch too, and the batch writes nothing.
            let batch = try await app.request(
                "POST", "/batch",
                json: #"{"atomic":true,"operations":[{"method":"DELETE","path":"/transactions/\#(parts[0])"}]}"#)
            #expect(batch.status == 409, "\(batch.text)")
            #expect(try await Self.count(app) == "4")

            let since = try await app.changes().lastSeq
            let deleted = try await app.request("DELETE", "/transactions/\(parent)")
            #expect(deleted.status == 200 && (deleted.object["splits"] as? [[String: Any]])?.count == 3, "\(deleted.text)")
            for id in [parent] + parts { #expect(try await app.request("GET", "/transactions/\(id)").status == 404) }
            #expect(try await Self.count(app) == "0")
            let tombstones = try await app.changes("since=\(since)").changes.filter { $0["op"] as? String == "delete" }
            #expect(Set(tombstones.map { "\($0["id"]!)" }) == Set(([parent] + parts).map(String.init)))
        }
    }

    /// A part is dated, titled and paid like its split, and a category holding parts is not deleted from
    /// under them (migrations/0019): both answer what to do instead, and change nothing.
    @Test func aPartFollowsItsSplitAndKeepsItsCategory() async throws {
        try await Self.withLedger { app in
            let (parent, parts) = try await Self.postReceipt(app)
            for (member, value) in [("title", #""Other""#), ("date", #""2026-11-11""#), ("payee", #""Someone""#)] {
                let drift = try await app.request("PATCH", "/transactions/\(parts[0])", json: #"{"\#(member)":\#(value)}"#)
                #expect(drift.status == 422 && drift.problemFields == [member], "\(member): \(drift.text)")
            }
            let part = try await app.request("GET", "/transactions/\(parts[0])")
            #expect(part.object["title"] as? String == "Supermarket" && part.object["date"] as? String == "2026-11-10", "\(part.text)")

            let refused = try await app.request("DELETE", "/categories/2")
            #expect(refused.status == 409 && refused.problemFields == ["id"], "\(refused.text)")
            #expect(try await app.request("GET", "/categories/2").status == 200)
            #expect(try await Self.count(app) == "4")
            // Once the part names another category, the category goes.
            let moved = try await app.request("PATCH", "/transactions/\(parts[1])", json: #"{"categoryId":1}"#)
            #expect(moved.status == 200, "\(moved.text)")
            #expect(try await app.request("DELETE", "/categories/2").status == 200)
            #expect(try await app.request("GET", "/transactions/\(parent)").object["amount"] as? Double == 60)
        }
    }

    // MARK: Batch, retries, import

    @Test func aSplitInAnAtomicBatchIsOneOperation() async throws {
        try await Self.withLedger { app in
            let good = try await app.request(
                "POST", "/batch",
                json: #"""
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/categories","body":{"title":"Toys","amount":5}},
                      {"method":"POST","path":"/transactions","body":{"accountId":1,"title":"S","amount":"9.00","splits":[{"categoryId":4,"amount":"4.00"},{"categoryId":1,"amount":"5.00"}]}}]}
                    """#)
            #expect(good.status == 200 && good.batchStatuses == [201, 201], "\(good.text)")
            #expect(try await Self.count(app) == "3")

            let categories = try await app.scalar("SELECT count(*) FROM categories")
            let bad = try await app.request(
                "POST", "/batch",
                json: #"""
                    {"atomic":true,"operations":[
                      {"method":"POST","path":"/categories","body":{"title":"Books","amount":5}},
                      {"method":"POST","path":"/transactions","body":{"accountId":1,"title":"S","amount":"9.00","splits":[{"categoryId":1,"amount":"4.00"},{"categoryId":77,"amount":"5.00"}]}}]}
                    """#)
            #expect(bad.status == 422 && bad.text.contains(#"splits[1].categoryId"#), "\(bad.text)")
            #expect(try await Self.count(app) == "3")
            #expect(try await app.scalar("SELECT count(*) FROM categories") == categories)
        }
    }

    @Test func aRetriedSplitPostAnswersTheSame() async throws {
        try await Self.withLedger { app in
            let key = [("Idempotency-Key", "split-receipt-1")]
            let first = try await app.request("POST", "/accounts/1/transactions", json: Self.receipt, headers: key)
            let again = try await app.request("POST", "/accounts/1/transactions", json: Self.receipt, headers: key)
            #expect(first.status == 201 && again.status == 201, "\(again.text)")
            #expect(first.text == again.text)
            #expect(try await Self.count(app) == "4")
        }
    }

    @Test func aJSONStatementMayHoldSplits() async throws {
        try await Self.withLedger { app in
            let statement = #"""
                [{"date":"2026-11-03","title":"Market","amount":"-9.00","importId":"m-1",
                  "splits":[{"categoryId":1,"amount":"-5.00"},{"categoryId":2,"amount":"-4.00","note":"soap"}]},
                 {"date":"2026-11-04","title":"Bakery","amount":"-2.00","importId":"b-1"}]
                """#
            let imported = try await app.request("POST", "/accounts/1/transactions/import?amounts=bank", json: statement)
            #expect(imported.status == 201 && imported.object["created"] as? Int == 2, "\(imported.text)")
            #expect(try await Self.count(app) == "4")
            #expect(try await app.request("GET", "/categories/2?month=2026-11").text.contains(#""spent":4.00,"#))
            #expect(try await app.request("GET", "/accounts/1").text.contains(#""balance":-11.00,"#))
            // Again: both rows are duplicates, the split's parts with it.
            let again = try await app.request("POST", "/accounts/1/transactions/import?amounts=bank", json: statement)
            #expect(again.status == 200 && again.object["duplicates"] as? Int == 2, "\(again.text)")
            #expect(try await Self.count(app) == "4")
            // A part naming no category is the row's error; nothing is written.
            let bad = try await app.request(
                "POST", "/accounts/1/transactions/import",
                json: #"[{"date":"2026-11-05","title":"X","amount":"2.00","splits":[{"categoryId":1,"amount":1},{"categoryId":55,"amount":1}]}]"#)
            #expect(bad.status == 422 && bad.text.contains("splits[1].categoryId"), "\(bad.text)")
            #expect(try await Self.count(app) == "4")
        }
    }

    // MARK: Seed and export

    @Test func exportThenSeedThenExportKeepsASplit() async throws {
        try await TestApp.with { first in
            try await first.seed(
                #"""
                {"categories":[{"id":1,"title":"Food","amount":10},{"id":2,"title":"Home","amount":10}],
                 "accounts":[{"id":1,"name":"Checking","type":"checking"}],
                 "transactions":[{"id":5,"accountId":1,"title":"Shop","amount":"7.00","date":"2026-11-02",
                   "splits":[{"id":8,"categoryId":1,"amount":"3.00","note":"n"},{"id":9,"categoryId":2,"amount":"4.00"}]},
                   {"id":6,"categoryId":1,"title":"Milk","amount":"1.00","date":"2026-11-02"}]}
                """#)
            #expect(try await first.request("GET", "/transactions/9").object["parentId"] as? Int == 5)
            #expect(try await first.request("GET", "/categories/2?month=2026-11").text.contains(#""spent":4.00,"#))
            let exported = try await first.export()
            #expect(
                exported.contains(
                    #""parentId":null,"splits":[{"id":8,"categoryId":1,"amount":3.00,"note":"n"},{"id":9,"categoryId":2,"amount":4.00,"note":null}]"#),
                "\(exported)")
            // The parts travel inside their parent only.
            #expect(!exported.contains(#""parentId":5"#))
            try await TestApp.with { second in
                try await second.seed(exported)
                #expect(try await second.export() == exported)
                #expect(try await second.request("GET", "/transactions/8").object["parentId"] as? Int == 5)
                // The next server id follows the seeded parts.
                let next = try await second.request("POST", "/transactions", json: #"{"categoryId":1,"title":"x","amount":1}"#)
                #expect(next.object["id"] as? Int == 10, "\(next.text)")
            }
        }
    }
}
