import BudgetAPI
import Foundation
import Testing
import APITestSupport

/// Where we deliberately differ from json-server (docs/json-server.md): 400, 404 listing names, 409, 415, 403.
@Suite struct CollectionsErrorsTests {
    @Test func bodiesThatAreNotObjectsAre400AndWriteNothing() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"a"}]}"#)
            for (method, path, body) in [
                ("POST", "/posts", "42"), ("PUT", "/posts/1", "[]"), ("PATCH", "/posts/1", "\"x\""),
                ("POST", "/posts", "[1]"), ("POST", "/posts", "{bad"), ("POST", "/posts", #"{"id":true}"#),
            ] {
                let response = try await app.request(method, path, json: body)
                #expect(response.status == 400, "\(method) \(path) \(body)")
            }
            #expect(try await app.request("GET", "/posts").text == #"[{"id":1,"title":"a"}]"#)
        }
    }

    @Test func writesWithoutAJSONContentTypeAre415AndChangeNothing() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"a"}],"profile":{"name":"p"}}"#)
            let text = [("Content-Type", "text/plain")]
            for (method, path) in [("PUT", "/posts/1"), ("PATCH", "/posts/1"), ("POST", "/posts"), ("PUT", "/profile")] {
                let response = try await app.request(method, path, json: #"{"title":"b"}"#, headers: text)
                #expect(response.status == 415, "\(method) \(path)")
            }
            #expect(try await app.request("GET", "/posts").text == #"[{"id":1,"title":"a"}]"#)
            #expect(try await app.request("GET", "/profile").text == #"{"name":"p"}"#)
        }
    }

    @Test func unknownCollectionIs404ListingTheNames() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[],"profile":{}}"#)
            let response = try await app.request("GET", "/nope")
            #expect(response.status == 404)
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(
                (response.object["detail"] as? String)?.hasSuffix("categories, accounts, transactions, budgets, schedules, posts, profile") == true)
            #expect(try await app.request("POST", "/nope", json: "{}").status == 404)
            #expect(try await app.request("DELETE", "/nope/1").status == 404)
        }
    }

    @Test func singularResourcesReplaceMergeAndPostAnswers201() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"profile":{"name":"typicode","age":1}}"#)
            #expect(try await app.request("GET", "/profile").text == #"{"name":"typicode","age":1}"#)
            // List parameters mean nothing to one object, so they cannot make its GET fail.
            let withListParameters = try await app.request("GET", "/profile?_page=abc&_sort=name")
            #expect(withListParameters.status == 200)
            let patched = try await app.request("PATCH", "/profile", json: #"{"age":2,"city":"Paris"}"#)
            #expect(patched.text == #"{"name":"typicode","age":2,"city":"Paris"}"#)
            let put = try await app.request("PUT", "/profile", json: #"{"name":"new"}"#)
            #expect(put.status == 200)
            #expect(put.text == #"{"name":"new"}"#)
            let posted = try await app.request("POST", "/profile", json: #"{"name":"posted"}"#)
            #expect(posted.status == 201)
            #expect(try await app.request("GET", "/profile").text == #"{"name":"posted"}"#)
            #expect(try await app.scalar("SELECT version FROM documents WHERE collection = 'profile'") == "4")
            #expect(try await app.request("GET", "/profile/1").status == 404)
            #expect(try await app.request("DELETE", "/profile").status == 405)
        }
    }

    @Test func pluralCollectionsRefusePutWithoutAnID() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[]}"#)
            let response = try await app.request("PUT", "/posts", json: "{}")
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, HEAD, POST")
        }
    }

    @Test func getDBShowsEverythingAndPutDBNeedsAllowReset() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1}],"profile":{"a":1}}"#)
            let database = try await app.request("GET", "/db")
            #expect(
                database.text
                    == #"{"categories":[],"accounts":[],"transactions":[],"budgets":[],"schedules":[],"posts":[{"id":1}],"profile":{"a":1}}"#)
            let refused = try await app.request("PUT", "/db", json: #"{"notes":[]}"#)
            #expect(refused.status == 403)
            #expect(try await app.request("GET", "/posts").status == 200)
        }
        var options = BudgetApp.Options()
        options.allowsReset = true
        try await TestApp.with(options: options) { app in
            try await app.seed(#"{"posts":[{"id":1}]}"#)
            let replaced = try await app.request("PUT", "/db", json: #"{"notes":[{"id":"n"}],"categories":[{"id":2,"title":"T","amount":5}]}"#)
            #expect(replaced.status == 200)
            #expect(replaced.text.contains(#""notes":[{"id":"n"}]"#))
            #expect(try await app.request("GET", "/posts").status == 404)
            #expect(try await app.request("GET", "/categories/2").status == 200)
            let reserved = try await app.request("PUT", "/db", json: #"{"db":[],"posts":[7]}"#)
            #expect(reserved.status == 400)
            #expect(reserved.problemFields == ["$.db", "$.posts[0]"])
            #expect(try await app.request("GET", "/notes").text == #"[{"id":"n"}]"#)
        }
    }

    @Test func putBodyIDMustMatchThePath() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"a"}]}"#)
            #expect(try await app.request("PUT", "/posts/1", json: #"{"id":2}"#).status == 422)
            let kept = try await app.request("PUT", "/posts/1", json: #"{"title":"b"}"#)
            #expect(kept.text == #"{"id":1,"title":"b"}"#)
        }
    }
}
