@testable import BudgetAPI
import Testing
import APITestSupport

/// `_embed` and `_expand` on generic collections, as json-server 0.17 (and 1.x's `_embed=parent`) answer them.
@Suite struct CollectionsRelationsTests {
    static let blog = #"""
        {"posts":[{"id":1,"title":"json-server","views":1234567890123456789},{"id":2,"title":"second"}],
         "comments":[{"id":1,"body":"a","postId":1},{"id":2,"body":"b","postId":"1"},{"id":3,"body":"c","postId":2},
                     {"id":4,"body":"orphan","postId":9},{"id":5,"body":"loose"}],
         "likes":[{"id":1,"postId":2,"rate":1.50}],
         "profile":{"name":"typicode"}}
        """#

    static let comment1 = #"{"id":1,"body":"a","postId":1}"#
    static let comment2 = #"{"id":2,"body":"b","postId":"1"}"#
    static let comment3 = #"{"id":3,"body":"c","postId":2}"#
    static let post1 = #"{"id":1,"title":"json-server","views":1234567890123456789}"#
    static let post2 = #"{"id":2,"title":"second"}"#

    @Test func embedAppendsChildrenWhoseLinkIsTheIDAsNumberOrString() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.blog)
            let list = try await app.request("GET", "/posts?_embed=comments")
            #expect(list.status == 200)
            #expect(
                list.text == #"[{"id":1,"title":"json-server","views":1234567890123456789,"comments":[\#(Self.comment1),\#(Self.comment2)]},"#
                    + #"{"id":2,"title":"second","comments":[\#(Self.comment3)]}]"#)
            let one = try await app.request("GET", "/posts/2?_embed=comments")
            #expect(one.text == #"{"id":2,"title":"second","comments":[\#(Self.comment3)]}"#)
        }
    }

    @Test func expandAppendsTheParentAndLeavesItOutWhenThereIsNone() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.blog)
            let expanded = try await app.request("GET", "/comments?_expand=post")
            #expect(
                expanded.text == "["
                    + #"{"id":1,"body":"a","postId":1,"post":\#(Self.post1)},"#
                    + #"{"id":2,"body":"b","postId":"1","post":\#(Self.post1)},"#
                    + #"{"id":3,"body":"c","postId":2,"post":\#(Self.post2)},"#
                    + #"{"id":4,"body":"orphan","postId":9},{"id":5,"body":"loose"}]"#)
            #expect(try await app.request("GET", "/comments/3?_expand=post").text == #"{"id":3,"body":"c","postId":2,"post":\#(Self.post2)}"#)
            // json-server 1.x writes the parent with _embed and its singular name.
            #expect(try await app.request("GET", "/comments/2?_embed=post").text == #"{"id":2,"body":"b","postId":"1","post":\#(Self.post1)}"#)
        }
    }

    @Test func severalRelationsCommaSeparatedOrRepeatedWithPages() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.blog)
            let expected = #"[{"id":2,"title":"second","comments":[\#(Self.comment3)],"likes":[{"id":1,"postId":2,"rate":1.50}]}]"#
            let commas = try await app.request("GET", "/posts?_embed=comments,likes&_page=2&_limit=1")
            #expect(commas.text == expected)
            #expect(commas.header("X-Total-Count") == "2")
            let repeated = try await app.request("GET", "/posts?_embed=comments&_embed=likes&_embed=comments&_sort=id&_order=desc&_limit=1")
            #expect(repeated.text == expected)
            // Embeds come before expands whatever the parameter order, as json-server 0.17 applies them.
            let both = try await app.request("GET", "/posts/1/comments?_expand=post&_embed=likes")
            #expect(
                both.text == #"[{"id":1,"body":"a","postId":1,"likes":[],"post":\#(Self.post1)},"#
                    + #"{"id":2,"body":"b","postId":"1","likes":[],"post":\#(Self.post1)}]"#)
        }
    }

    @Test func namesThatAreNoCollectionAre400AndStoredMembersWin() async throws {
        try await TestApp.with { app in
            try await app.seed(Self.blog)
            for path in ["/posts?_embed=nope", "/comments?_expand=comments", "/posts/1?_embed=profile", "/posts?_embed=comments'--"] {
                let answer = try await app.request("GET", path)
                #expect(answer.status == 400, "\(path)")
                #expect(answer.header("Content-Type") == "application/problem+json")
            }
            _ = try await app.request("POST", "/comments", json: #"{"body":"own","postId":2,"post":"kept"}"#)
            #expect(try await app.request("GET", "/comments/6?_expand=post").text == #"{"id":6,"body":"own","postId":2,"post":"kept"}"#)
            #expect(try await app.request("GET", "/posts").text == "[\(Self.post1),\(Self.post2)]")
        }
    }

    @Test func resolvingPrefersCollectionsThenSingulars() throws {
        let plurals = ["posts", "comments", "people"]
        #expect(
            try DocumentRelation.resolve(embeds: ["comments", "person"], expands: ["post", "post"], on: "comments", among: plurals) == [
                .children(collection: "comments", field: "commentId"),
                .parent(member: "person", collection: "people", field: "personId"),
                .parent(member: "post", collection: "posts", field: "postId"),
            ])
        #expect(throws: APIError.self) { try DocumentRelation.resolve(embeds: [], expands: ["posts"], on: "comments", among: plurals) }
    }
}
