import Foundation
import Testing
import APITestSupport

@Suite struct TransactionTests {
    private static func today() -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: Date())
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    @Test func nestedCreateTakesTheCategoryFromThePath() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":100}"#)
            let response = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"Milk","amount":3.49}"#)
            #expect(response.status == 201)
            #expect(response.header("Location") == "/transactions/1")
            #expect(response.text.contains(#""categoryId":1,"title":"Milk","amount":3.49,"date":"\#(Self.today())","note":null"#))
            #expect(response.object["version"] as? Int == 1)
        }
    }

    @Test func nestedRoutesAnswer404ForAMissingCategory() async throws {
        try await TestApp.with { app in
            let created = try await app.request("POST", "/categories/9/transactions", json: #"{"title":"Milk","amount":1}"#)
            #expect(created.status == 404)
            #expect(try await app.request("GET", "/categories/9/transactions").status == 404)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
        }
    }

    /// The list's one-level statement answers no row for an empty page; the statement after it answers the header.
    @Test func anEmptyCategoryListsNothingWithItsFeedPositionAndAPageKeepsItsBytes() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":100}"#)
            let empty = try await app.request("GET", "/categories/1/transactions?_page=1&_limit=5")
            #expect(empty.status == 200 && empty.text == "[]" && empty.header("X-Total-Count") == "0", "\(empty.text)")
            #expect(empty.header("X-Sync-Seq") != nil)
            let created = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"Refund","amount":-12.5}"#)
            #expect(created.status == 201)
            let page = try await app.request("GET", "/categories/1/transactions?_page=1&_limit=5")
            #expect(page.text == "[" + created.text + "]" && page.text.contains(#""amount":-12.50,"#), "\(page.text)")
            #expect(page.header("X-Total-Count") == "1")
            let beyond = try await app.request("GET", "/categories/1/transactions?_page=3&_limit=5")
            #expect(beyond.status == 200 && beyond.text == "[]" && beyond.header("X-Total-Count") == "1", "\(beyond.text)")
        }
    }

    @Test func unknownCategoryIs422NamingCategoryId() async throws {
        try await TestApp.with { app in
            let response = try await app.request("POST", "/transactions", json: #"{"categoryId":3,"title":"x","amount":1}"#)
            #expect(response.status == 422)
            #expect(response.problemFields == ["categoryId"])
        }
    }

    @Test func listsAreScopedAndOrdered() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"[{"title":"A","amount":1},{"title":"B","amount":1}]"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":2,"title":"b1","amount":1}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"a1","amount":1}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"a2","amount":"2.00"}"#)
            let listOfA = try await app.request("GET", "/categories/1/transactions")
            #expect(listOfA.status == 200)
            #expect(listOfA.array.map { $0["title"] as? String } == ["a1", "a2"])
            #expect(try await app.request("GET", "/categories/2/transactions").array.count == 1)
            #expect(try await app.request("GET", "/transactions").array.map { $0["id"] as? Int } == [1, 2, 3])
            _ = try await app.request("POST", "/categories", json: #"{"title":"Empty","amount":1}"#)
            #expect(try await app.request("GET", "/categories/3/transactions").text == "[]")
        }
    }

    @Test(arguments: [
        (#"{"title":"x","amount":1,"date":"2026-02-30"}"#, ["date"]),
        (#"{"title":"x","amount":1,"date":"20-11-2026"}"#, ["date"]),
        (#"{"title":"x","amount":1,"note":5}"#, ["note"]),
        (#"{"title":"","amount":1.001}"#, ["title", "amount"]),
        (#"{"amount":1}"#, ["title"]),
    ])
    func invalidTransactionsAre422(body: String, fields: [String]) async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            let response = try await app.request("POST", "/categories/1/transactions", json: body)
            #expect(response.status == 422)
            #expect(Set(response.problemFields) == Set(fields))
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
        }
    }

    @Test func limitsOnTitleAndNote() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            let longTitle = String(repeating: "t", count: 201)
            let longNote = String(repeating: "n", count: 2001)
            let tooLong = try await app.request(
                "POST", "/categories/1/transactions", json: #"{"title":"\#(longTitle)","amount":1,"note":"\#(longNote)"}"#)
            #expect(Set(tooLong.problemFields) == ["title", "note"])
            let justRight = String(repeating: "n", count: 2000)
            let accepted = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"ok","amount":1,"note":"\#(justRight)"}"#)
            #expect(accepted.status == 201)
        }
    }

    @Test func expandCategory() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":5}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"t","amount":2,"date":"2026-11-20"}"#)
            let one = try await app.request("GET", "/transactions/1?_expand=category")
            let category = one.object["category"] as? [String: Any]
            #expect(category?["title"] as? String == "A")
            #expect(one.text.contains(#""category":{"id":1,"title":"A","amount":5.00,"rollover":false,"spent":2.00,"remaining":3.00"#))
            #expect(try await app.request("GET", "/transactions?_expand=category").array.first?["category"] != nil)
            #expect(try await app.request("GET", "/transactions?_expand=categories").status == 400)
        }
    }

    @Test func patchClearsNoteAndMovesBetweenCategories() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"[{"title":"A","amount":5},{"title":"B","amount":5}]"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"t","amount":2,"note":"hi"}"#)
            let cleared = try await app.request("PATCH", "/transactions/1", json: #"{"note":null,"categoryId":2}"#)
            #expect(cleared.status == 200)
            #expect(cleared.text.contains(#""categoryId":2"#))
            #expect(cleared.text.contains(#""note":null"#))
            #expect(try await app.request("GET", "/categories/2").text.contains(#""spent":2.00"#))
            #expect(try await app.request("GET", "/categories/1").text.contains(#""spent":0.00"#))
            let badMove = try await app.request("PATCH", "/transactions/1", json: #"{"categoryId":77}"#)
            #expect(badMove.status == 422)
            #expect(badMove.problemFields == ["categoryId"])
        }
    }

    @Test func putCreatesUnderTheClientIdAndReplaces() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":5}"#)
            let created = try await app.request(
                "PUT", "/transactions/100", json: #"{"categoryId":1,"title":"offline","amount":1.5,"date":"2026-01-02"}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/transactions/100")
            let replaced = try await app.request("PUT", "/transactions/100", json: #"{"categoryId":1,"title":"again","amount":2}"#)
            #expect(replaced.status == 200)
            #expect(replaced.text.contains(#""title":"again","amount":2.00,"date":"\#(Self.today())","note":null"#))
            #expect(replaced.object["version"] as? Int == 2)
            let next = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"n","amount":1}"#)
            #expect(next.object["id"] as? Int == 101)
        }
    }

    @Test func deleteAnswersTheRecord() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":5}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"t","amount":2}"#)
            let deleted = try await app.request("DELETE", "/transactions/1")
            #expect(deleted.status == 200)
            #expect(deleted.object["title"] as? String == "t")
            #expect(try await app.request("GET", "/transactions/1").status == 404)
            #expect(try await app.request("GET", "/categories/1").text.contains(#""spent":0.00"#))
        }
    }

    @Test func largeAmountsStayExact() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Big","amount":999999999999.99}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"t","amount":"999999999999.98"}"#)
            let category = try await app.request("GET", "/categories/1")
            #expect(category.text.contains(#""amount":999999999999.99,"rollover":false,"spent":999999999999.98,"remaining":0.01"#))
        }
    }
}
