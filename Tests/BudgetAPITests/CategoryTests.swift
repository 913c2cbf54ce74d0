import Foundation
import Testing
import APITestSupport

@Suite struct CategoryTests {
    @Test func createAnswers201WithLocationAndExactMoney() async throws {
        try await TestApp.with { app in
            let response = try await app.request("POST", "/categories", json: #"{"title":"Groceries","amount":400}"#)
            #expect(response.status == 201)
            #expect(response.header("Location") == "/categories/1")
            #expect(response.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(response.text.contains(#""amount":400.00,"rollover":false,"spent":0.00,"remaining":400.00"#))
            #expect(response.object["title"] as? String == "Groceries")
            #expect(response.object["version"] as? Int == 1)
            let createdAt = try #require(response.object["createdAt"] as? String)
            #expect(createdAt.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/) != nil, "whole seconds: \(createdAt)")
            #expect(try await app.scalar("SELECT amount::text FROM categories WHERE id = 1") == "400.00")
        }
    }

    @Test func spentAndRemainingFollowTransactions() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":"100.10"}"#)
            for amount in ["0.1", "0.2", "\"23.15\""] {
                let added = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"x","amount":\#(amount)}"#)
                #expect(added.status == 201)
            }
            let category = try await app.request("GET", "/categories/1")
            #expect(category.status == 200)
            #expect(category.text.contains(#""amount":100.10,"rollover":false,"spent":23.45,"remaining":76.65"#))
            let list = try await app.request("GET", "/categories")
            #expect(list.array.count == 1)
            #expect(list.text.contains(#""spent":23.45"#))
            #expect(try await app.scalar("SELECT spent::text FROM category_balances WHERE id = 1") == "23.45")
        }
    }

    @Test func duplicateTitleIgnoringCaseIs409AndWritesNothing() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Rent","amount":900}"#)
            let duplicate = try await app.request("POST", "/categories", json: #"{"title":"rENT","amount":1}"#)
            #expect(duplicate.status == 409)
            #expect(duplicate.header("Content-Type") == "application/problem+json")
            #expect(duplicate.problemFields == ["title"])
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "1")
        }
    }

    @Test func explicitIDsAreKeptAndNeverCollideWithServerIDs() async throws {
        try await TestApp.with { app in
            let chosen = try await app.request("POST", "/categories", json: #"{"id":5,"title":"Chosen","amount":1}"#)
            #expect(chosen.status == 201)
            #expect(chosen.header("Location") == "/categories/5")
            let taken = try await app.request("POST", "/categories", json: #"{"id":5,"title":"Other","amount":1}"#)
            #expect(taken.status == 409)
            #expect(taken.problemFields == ["id"])
            let next = try await app.request("POST", "/categories", json: #"{"title":"Next","amount":1}"#)
            #expect(next.object["id"] as? Int == 6)
            let put = try await app.request("PUT", "/categories/40", json: #"{"title":"Put","amount":1}"#)
            #expect(put.status == 201)
            let after = try await app.request("POST", "/categories", json: #"{"title":"After","amount":1}"#)
            #expect(after.object["id"] as? Int == 41)
        }
    }

    @Test func aClientTakingTheFirstIDMovesTheSequencePastIt() async throws {
        try await TestApp.with { app in
            let first = try await app.request("POST", "/categories", json: #"{"id":1,"title":"One","amount":1}"#)
            #expect(first.status == 201)
            let next = try await app.request("POST", "/categories", json: #"{"title":"Two","amount":1}"#)
            #expect(next.status == 201)
            #expect(next.object["id"] as? Int == 2)
        }
    }

    @Test func putReplacesOrCreates() async throws {
        try await TestApp.with { app in
            let created = try await app.request("PUT", "/categories/7", json: #"{"title":"Travel","amount":50}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/categories/7")
            let replaced = try await app.request("PUT", "/categories/7", json: #"{"title":"Trips","amount":"75.5","spent":3}"#)
            #expect(replaced.status == 200)
            #expect(replaced.object["version"] as? Int == 2)
            #expect(replaced.text.contains(#""title":"Trips","amount":75.50,"rollover":false,"spent":0.00"#))
            let incomplete = try await app.request("PUT", "/categories/7", json: #"{"title":"Only title"}"#)
            #expect(incomplete.status == 422)
            #expect(incomplete.problemFields == ["amount"])
            let mismatch = try await app.request("PUT", "/categories/7", json: #"{"id":8,"title":"X","amount":1}"#)
            #expect(mismatch.status == 422)
            #expect(mismatch.problemFields == ["id"])
            #expect(try await app.scalar("SELECT title FROM categories WHERE id = 7") == "Trips")
        }
    }

    @Test func patchMergesAndCountsVersions() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Fun","amount":10}"#)
            let patched = try await app.request("PATCH", "/categories/1", json: #"{"amount":12.5}"#)
            #expect(patched.status == 200)
            #expect(patched.text.contains(#""title":"Fun","amount":12.50"#))
            #expect(patched.object["version"] as? Int == 2)
            let mergePatch = try await app.request(
                "PATCH", "/categories/1", json: #"{"title":"Leisure"}"#,
                headers: [("Content-Type", "application/merge-patch+json")]
            )
            #expect(mergePatch.status == 200)
            #expect(mergePatch.object["title"] as? String == "Leisure")
            #expect(mergePatch.object["version"] as? Int == 3)
            let missing = try await app.request("PATCH", "/categories/99", json: #"{"amount":1}"#)
            #expect(missing.status == 404)
            let nulled = try await app.request("PATCH", "/categories/1", json: #"{"title":null}"#)
            #expect(nulled.status == 422)
            #expect(nulled.problemFields == ["title"])
        }
    }

    @Test func deleteAnswersTheRecordAndCascades() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Gone","amount":10}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"t","amount":4}"#)
            let deleted = try await app.request("DELETE", "/categories/1")
            #expect(deleted.status == 200)
            #expect(deleted.text.contains(#""title":"Gone","amount":10.00,"rollover":false,"spent":4.00"#))
            #expect(try await app.request("GET", "/categories/1").status == 404)
            #expect(try await app.request("GET", "/transactions/1").status == 404)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
            #expect(try await app.request("DELETE", "/categories/1").status == 404)
        }
    }

    @Test func everyInvalidFieldIsReportedAtOnce() async throws {
        try await TestApp.with { app in
            let response = try await app.request("POST", "/categories", json: #"{"title":"","amount":"abc","colour":"red"}"#)
            #expect(response.status == 422)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(Set(response.problemFields) == ["title", "amount", "colour"])
            #expect(response.object["status"] as? Int == 422)
            #expect(response.object["title"] != nil)
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
        }
    }

    @Test(arguments: [
        (#"{"title":"A","amount":12.345}"#, "amount"),
        (#"{"title":"A","amount":-1}"#, "amount"),
        (#"{"title":"A","amount":1e12}"#, "amount"),
        (#"{"title":"A","amount":true}"#, "amount"),
        (#"{"title":"A","amount":"NaN"}"#, "amount"),
        (#"{"title":"A","amount":"Infinity"}"#, "amount"),
        (#"{"title":5,"amount":1}"#, "title"),
        (#"{"amount":1}"#, "title"),
        (#"{"title":"A"}"#, "amount"),
        (#"{"id":0,"title":"A","amount":1}"#, "id"),
        (#"{"id":"x","title":"A","amount":1}"#, "id"),
    ])
    func invalidBodiesAre422NamingTheField(body: String, field: String) async throws {
        try await TestApp.with { app in
            let response = try await app.request("POST", "/categories", json: body)
            #expect(response.status == 422)
            #expect(response.problemFields == [field])
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
        }
    }

    @Test func titleLengthCountsCharactersNotBytes() async throws {
        try await TestApp.with { app in
            let hundred = String(repeating: "é", count: 100)
            let hundredLong = try await app.request("POST", "/categories", json: #"{"title":"\#(hundred)","amount":1}"#)
            #expect(hundredLong.status == 201)
            let tooLong = String(repeating: "a", count: 101)
            let tooLongTitle = try await app.request("POST", "/categories", json: #"{"title":"\#(tooLong)","amount":1}"#)
            #expect(tooLongTitle.status == 422)
        }
    }

    @Test func arrayBodyInsertsAllOrNothing() async throws {
        try await TestApp.with { app in
            let invalid = try await app.request("POST", "/categories", json: #"[{"title":"A","amount":1},{"title":"","amount":1}]"#)
            #expect(invalid.status == 422)
            #expect(invalid.problemFields == ["[1].title"])
            let duplicate = try await app.request("POST", "/categories", json: #"[{"title":"A","amount":1},{"title":"a","amount":2}]"#)
            #expect(duplicate.status == 409)
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
            let valid = try await app.request("POST", "/categories", json: #"[{"title":"A","amount":1},{"title":"B","amount":2}]"#)
            #expect(valid.status == 201)
            #expect(valid.array.map { $0["title"] as? String } == ["A", "B"])
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "2")
        }
    }

    @Test func embedTransactions() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"t1","amount":1}"#)
            let one = try await app.request("GET", "/categories/1?_embed=transactions")
            let embedded = one.object["transactions"] as? [[String: Any]]
            #expect(embedded?.map { $0["title"] as? String } == ["t1"])
            let all = try await app.request("GET", "/categories?_embed=transactions")
            #expect((all.array.first?["transactions"] as? [Any])?.count == 1)
            #expect(try await app.request("GET", "/categories?_embed=bogus").status == 400)
        }
    }
}
