import BudgetAPI
import Foundation
import Testing
import APITestSupport

/// PostgreSQL text cannot hold a NUL byte: every input that carries one (path, query, body) is the client's
/// mistake, answered 400 or 422 with a problem that loses nothing, never a 500 and never a value cut short.
@Suite struct UnstorableInputTests {
    @Test func aNULInAQueryOrPathIs400() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"a"}],"profile":{"name":"p"}}"#)
            #expect(try await app.request("POST", "/categories", json: #"{"title":"a","amount":"1.00"}"#).status == 201)
            let targets = [
                "/categories?title=%00", "/categories?title=a%00b", "/categories?title_like=%00", "/categories?q=%00",
                "/categories?_sort=%00", "/posts?title=%00", "/posts?title%00=a", "/posts?q=a%00", "/posts?title_like=%00",
                "/posts/%00", "/%00", "/%00/1", "/posts/1/%00",
            ]
            for target in targets {
                let response = try await app.request("GET", target)
                #expect(response.status == 400, "\(target)")
                #expect(response.header("Content-Type") == "application/problem+json", "\(target)")
            }
            // A value is never cut short at the NUL: "a\0" is not "a", which a category is named.
            let cut = try await app.request("GET", "/categories?title=a%00")
            #expect(cut.status == 400)
            // A name that cannot be a collection's is no collection of the feed's, as for any other bad name.
            #expect(try await app.request("GET", "/changes?collection=%00").status == 404)
        }
    }

    @Test func aNULInABodyIsRefusedAndWritesNothing() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"a"}]}"#)
            let bodies: [(String, String, String)] = [
                ("POST", "/posts", #"{"title":"a\u0000b"}"#),
                ("POST", "/posts", #"{"a\u0000":1}"#),
                ("PATCH", "/posts/1", #"{"title":{"x":"\u0000"}}"#),
                ("PUT", "/posts/1", #"{"title":["\u0000"]}"#),
                ("POST", "/categories", #"{"title":"a\u0000","amount":"1.00"}"#),
                ("POST", "/categories", #"{"title":"a","amount":"1.00","note\u0000":1}"#),
                ("POST", "/posts/1/comments", #"{"body":"\u0000"}"#),
            ]
            for (method, path, body) in bodies {
                let response = try await app.request(method, path, json: body)
                #expect([400, 422].contains(response.status), "\(method) \(path) \(body): \(response.status)")
                #expect(response.header("Content-Type") == "application/problem+json", "\(method) \(path)")
            }
            #expect(try await app.request("GET", "/posts").text == #"[{"id":1,"title":"a"}]"#)
            #expect(try await app.request("GET", "/categories").text == "[]")
        }
    }
}
