import BudgetAPI
import Foundation
import Testing
import APITestSupport

/// The routes of docs/json-server.md on generic collections, as json-server 0.17 clients call them.
@Suite struct CollectionsRoutesTests {
    static let blog = #"""
        {"posts":[{"id":1,"title":"json-server","author":"typicode"}],
         "comments":[{"id":1,"body":"some comment","postId":1},{"id":2,"body":"other","postId":2}],
         "profile":{"name":"typicode"}}
        """#

    @Test func postsWithIntegerIDsAnswerExactly201WithLocation() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.blog)
            let created = try await app.request("POST", "/posts", json: #"{"title":"Second","author":"me","views":1234567890123456789}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/posts/2")
            #expect(created.text == #"{"id":2,"title":"Second","author":"me","views":1234567890123456789}"#)
            let list = try await app.request("GET", "/posts")
            #expect(list.status == 200)
            #expect(
                list.text == #"[{"id":1,"title":"json-server","author":"typicode"},"#
                    + #"{"id":2,"title":"Second","author":"me","views":1234567890123456789}]"#)
            #expect(try await app.request("GET", "/posts/2").text == created.text)
            #expect(try await app.request("GET", "/posts/9").status == 404)
        }
    }

    @Test func deletedIDsAreNeverReusedAndDependentsGo() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.blog)
            _ = try await app.request("POST", "/posts", json: #"{"title":"two"}"#)
            _ = try await app.request("POST", "/comments", json: #"{"body":"on two","postId":"2"}"#)
            let deleted = try await app.request("DELETE", "/posts/2")
            #expect(deleted.status == 200)
            #expect(deleted.text == #"{"id":2,"title":"two"}"#)
            // Both the numeric and the string postId 2 went; the comment on post 1 stays.
            #expect(try await app.request("GET", "/comments").text == #"[{"id":1,"body":"some comment","postId":1}]"#)
            #expect(try await app.request("DELETE", "/posts/2").status == 404)
            let next = try await app.request("POST", "/posts", json: #"{"title":"three"}"#)
            #expect(next.object["id"] as? Int == 3)
        }
    }

    @Test func offlineUUIDsAreKeptAndDuplicatesAre409() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"entries":[]}"#)
            let id = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
            let created = try await app.request("POST", "/entries", json: #"{"id":"\#(id)","day":"2026-11-20","done":false}"#)
            #expect(created.status == 201)
            #expect(created.header("Location") == "/entries/\(id)")
            let duplicate = try await app.request("POST", "/entries", json: #"{"id":"\#(id)"}"#)
            #expect(duplicate.status == 409)
            #expect(duplicate.header("Content-Type") == "application/problem+json")
            let other = "0B3C1E00-0000-4000-8000-000000000001"
            let pushed = try await app.request("PUT", "/entries/\(other)", json: #"{"day":"2026-11-21","done":true}"#)
            #expect(pushed.status == 201)
            #expect(pushed.text == #"{"id":"\#(other)","day":"2026-11-21","done":true}"#)
            let replaced = try await app.request("PUT", "/entries/\(other)", json: #"{"done":false}"#)
            #expect(replaced.status == 200)
            #expect(replaced.text == #"{"id":"\#(other)","done":false}"#)
            #expect(try await app.scalar("SELECT version FROM documents WHERE id = '\(other)'") == "2")
            // A server id never collides with an integer id a client chose.
            _ = try await app.request("POST", "/entries", json: #"{"id":41}"#)
            #expect(try await app.request("POST", "/entries", json: "{}").text == #"{"id":42}"#)
        }
    }

    @Test func arrayPostIsAllOrNothing() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.blog)
            let failed = try await app.request("POST", "/posts", json: #"[{"title":"a"},{"id":1,"title":"taken"}]"#)
            #expect(failed.status == 409)
            #expect(try await app.scalar("SELECT count(*) FROM documents WHERE collection = 'posts'") == "1")
            let bulk = try await app.request("POST", "/posts", json: #"[{"title":"a"},{"id":"x","title":"b"}]"#)
            #expect(bulk.status == 201)
            // The failed request's id went back with its rollback; ids of committed records are never reused.
            #expect(bulk.text == #"[{"id":2,"title":"a"},{"id":"x","title":"b"}]"#)
        }
    }

    @Test func quakesKeepStringCodesMillisecondsAndNestedCoordinates() async throws {
        try await TestApp.with { app in
            let quake =
                #"{"code":"nc73649170","time":1700000000123,"magnitude":4.50,"geometry":{"type":"Point","coordinates":[-122.8096667,38.8243333,1.98]}}"#
            try await app.seed(#"{"quakes":[\#(quake)]}"#)
            #expect(try await app.request("GET", "/quakes").text == "[{\"id\":1," + quake.dropFirst() + "]")
            #expect(try await app.request("GET", "/quakes/1").text.contains(#""magnitude":4.50,"#))
        }
    }

    @Test func peopleKeepSnakeCaseAndDogsFollowTheirPerson() async throws {
        try await TestApp.with { app in
            try await app.seed(
                #"""
                {"people":[{"id":1,"first_name":"Ada","last_name":"L","dogs":[{"name":"Rex","is_good":true}]}],
                 "dogs":[{"id":1,"name":"Rex","personId":1}]}
                """#)
            let patched = try await app.request("PATCH", "/people/1", json: #"{"nick_name":"A","first_name":"Ada B"}"#)
            #expect(patched.text == #"{"id":1,"first_name":"Ada B","last_name":"L","dogs":[{"name":"Rex","is_good":true}],"nick_name":"A"}"#)
            #expect(try await app.request("GET", "/people/1/dogs").text == #"[{"id":1,"name":"Rex","personId":1}]"#)
            _ = try await app.request("DELETE", "/people/1")
            #expect(try await app.request("GET", "/dogs").text == "[]")
        }
    }

    @Test func nestedRoutesStoreTheParentIDsJSONType() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1},{"id":"abc"}],"comments":[]}"#)
            let numeric = try await app.request("POST", "/posts/1/comments", json: #"{"body":"hi"}"#)
            #expect(numeric.status == 201)
            #expect(numeric.text == #"{"id":1,"body":"hi","postId":1}"#)
            let textual = try await app.request("POST", "/posts/abc/comments", json: #"{"body":"yo"}"#)
            #expect(textual.text == #"{"id":2,"body":"yo","postId":"abc"}"#)
            #expect(try await app.request("GET", "/posts/1/comments").array.count == 1)
            #expect(try await app.request("GET", "/posts/abc/comments").array.first?["body"] as? String == "yo")
            #expect(try await app.request("GET", "/posts/7/comments").status == 404)
            #expect(try await app.request("GET", "/posts/1/nope").status == 404)
        }
    }

    @Test func patchMergesShallowlyAndMergePatchNullRemoves() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"notes":[{"id":1,"a":1,"b":{"x":1},"c":3}]}"#)
            let merged = try await app.request("PATCH", "/notes/1", json: #"{"b":{"y":2},"a":null,"d":4}"#)
            #expect(merged.text == #"{"id":1,"a":null,"b":{"y":2},"c":3,"d":4}"#)
            let removed = try await app.request(
                "PATCH", "/notes/1", json: #"{"a":null}"#, headers: [("Content-Type", "application/merge-patch+json")]
            )
            #expect(removed.text == #"{"id":1,"b":{"y":2},"c":3,"d":4}"#)
            #expect(try await app.scalar("SELECT version FROM documents WHERE collection = 'notes'") == "3")
            #expect(try await app.request("PATCH", "/notes/2", json: "{}").status == 404)
            let mismatch = try await app.request("PATCH", "/notes/1", json: #"{"id":2}"#)
            #expect(mismatch.status == 422)
            #expect(mismatch.problemFields == ["id"])
        }
    }
}

/// Generic lists through the query language (docs/json-server.md): jsonb paths, pages with their headers, nested lists.
@Suite struct CollectionsListingTests {
    @Test func filtersSortsAndPagesGenericRecords() async throws {
        try await TestApp.with { app in
            try await app.seed(
                #"""
                {"posts":[{"id":1,"views":9,"author":{"name":"a"}},{"id":2,"views":10,"author":{"name":"b"}},
                          {"id":3,"views":100,"author":{"name":"a"}}],
                 "comments":[{"id":1,"postId":1,"n":2},{"id":2,"postId":1,"n":1},{"id":3,"postId":2,"n":0}]}
                """#)
            let filtered = try await app.request("GET", "/posts?author.name=a&_sort=views&_order=desc")
            #expect(filtered.array.map { $0["id"] as? Int } == [3, 1])
            let paged = try await app.request("GET", "/posts?_page=2&_limit=2")
            #expect(paged.array.map { $0["id"] as? Int } == [3])
            #expect(paged.header("X-Total-Count") == "3")
            #expect(paged.header("Link")?.contains(#"rel="prev""#) == true)
            let nested = try await app.request("GET", "/posts/1/comments?_sort=n")
            #expect(nested.array.map { $0["id"] as? Int } == [2, 1])
            #expect(try await app.request("GET", "/posts?views_gte=10").array.count == 2)
        }
    }
}
