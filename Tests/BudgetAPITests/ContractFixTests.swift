import BudgetAPI
import Foundation
import Testing
import APITestSupport

/// Server bugs that the contract check (`.ci/contract`, schemathesis against openapi.yaml) found.
@Suite struct ContractFixTests {
    /// PostgreSQL's jsonb cannot hold U+0000: `POST /entries` with `"\u0000"` in a string was a 500
    /// ("unsupported Unicode escape sequence"). It is a 422 naming the member now, and nothing is written.
    @Test func aNULInAGenericRecordIs422NamingTheMember() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"a"}],"profile":{"name":"p"}}"#)
            let cases: [(String, String, String, String)] = [
                ("POST", "/posts", #"{"title":"x\u0000y"}"#, "title"),
                ("POST", "/posts", #"[{"title":"ok"},{"tags":["a","\u0000"]}]"#, "[1].tags[1]"),
                ("POST", "/posts", #"{"author":{"na\u0000me":"ada"}}"#, "author.na\u{0}me"),
                ("PUT", "/posts/1", #"{"title":"\u0000"}"#, "title"),
                ("PATCH", "/posts/1", #"{"meta":{"note":"\u0000"}}"#, "meta.note"),
                ("POST", "/posts/1/comments", #"{"body":"\u0000"}"#, "body"),
                ("PUT", "/profile", #"{"name":"\u0000"}"#, "name"),
            ]
            for (method, path, body, field) in cases {
                let response = try await app.request(method, path, json: body)
                #expect(response.status == 422, "\(method) \(path) \(body)")
                #expect(response.header("Content-Type") == "application/problem+json")
                #expect(response.problemFields == [field], "\(method) \(path) \(body)")
            }
            #expect(try await app.request("GET", "/posts").text == #"[{"id":1,"title":"a"}]"#)
            #expect(try await app.request("GET", "/profile").text == #"{"name":"p"}"#)
        }
    }

    /// A text parameter ends at a NUL, so a typed title with U+0000 would have been stored cut short. It is a
    /// 422 naming the field, like any other invalid field, and nothing is written.
    @Test func aNULInATypedFieldIs422AndWritesNothing() async throws {
        try await TestApp.with { app in
            let category = try await app.request("POST", "/categories", json: #"{"title":"Food\u0000 and more","amount":10}"#)
            #expect(category.status == 422)
            #expect(category.problemFields == ["title"])
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")

            #expect(try await app.request("POST", "/categories", json: #"{"id":1,"title":"Food","amount":10}"#).status == 201)
            let transaction = try await app.request(
                "POST", "/categories/1/transactions", json: #"{"title":"Milk","amount":1,"note":"\u0000"}"#)
            #expect(transaction.status == 422)
            #expect(transaction.problemFields == ["note"])
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
        }
    }

    /// A client-chosen integer id past 2^31 was a 500: moving the collection's next id past it bound the id as
    /// an `integer`. It is kept (201), and the next server id follows it, as for any other chosen id.
    @Test func aChosenIdPastTwoToThe31IsKeptAndTheNextIdFollowsIt() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"a"}]}"#)
            let chosen = try await app.request("POST", "/posts", json: #"{"id":913816424361,"title":"big"}"#)
            #expect(chosen.status == 201)
            #expect(chosen.text == #"{"id":913816424361,"title":"big"}"#)
            let next = try await app.request("POST", "/posts", json: #"{"title":"next"}"#)
            #expect(next.status == 201)
            #expect(next.text == #"{"id":913816424362,"title":"next"}"#)
            let put = try await app.request("PUT", "/posts/9000000000000", json: #"{"title":"put"}"#)
            #expect(put.status == 201)
            let array = try await app.request("POST", "/posts", json: #"[{"id":4294967296},{"title":"after"}]"#)
            #expect(array.status == 201)
            #expect(array.array.map { $0["id"] as? Int } == [4_294_967_296, 9_000_000_000_001])
        }
    }

    /// After a client chose the largest id, the next server-assigned id ran the sequence past its maximum: a 500.
    /// It is a 409 naming `id` now, and a record sent with an id of its own is still created.
    @Test func noIdLeftToAssignIs409() async throws {
        try await TestApp.with { app in
            let largest = try await app.request("POST", "/categories", json: #"{"id":9223372036854775807,"title":"Last","amount":1}"#)
            #expect(largest.status == 201, "\(largest.text)")
            let next = try await app.request("POST", "/categories", json: #"{"title":"Next","amount":1}"#)
            #expect(next.status == 409, "\(next.text)")
            #expect(next.problemFields == ["id"])
            let chosen = try await app.request("POST", "/categories", json: #"{"id":5,"title":"Chosen","amount":1}"#)
            #expect(chosen.status == 201)
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "2")
        }
    }

    /// A batch is one body: a NUL anywhere in it is refused before any operation runs.
    @Test func aNULInABatchIs422AndAppliesNothing() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[]}"#)
            let batch =
                #"{"operations":[{"method":"POST","path":"/posts","body":{"title":"ok"}},{"method":"POST","path":"/posts","body":{"title":"\u0000"}}]}"#
            let response = try await app.request("POST", "/batch", json: batch)
            #expect(response.status == 422)
            #expect(response.problemFields == ["operations[1].body.title"])
            #expect(try await app.request("GET", "/posts").text == "[]")
        }
    }
}
