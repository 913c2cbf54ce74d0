import Foundation
import Testing
import TestSupport
import APITestSupport

/// The writing cases of json-server 0.17.4's `__tests__/server/plural.js`, in its order (skipped cases: see
/// JSONServerPluralReadTests). They share one server and run one at a time, each from a fresh copy of the fixture.
@Suite(.serialized) struct JSONServerPluralWriteTests {
    typealias F = JSONServerFixture
    static let app = Task { try await TestApp.jsonServerFixture() }

    /// The server, reset to the fixture.
    func freshApp() async throws -> TestApp {
        let app = try await Self.app.value
        try await app.seed(F.seed, replacing: true)
        return app
    }

    func count(_ collection: String, on app: TestApp) async throws -> Int {
        try await app.request("GET", "/\(collection)").array.count
    }

    /// json-server 0.17 (issue 510): a record whose member is null does not break a filter on that member.
    @Test func filterSkipsNullValues() async throws {
        let app = try await freshApp()
        #expect(try await app.request("POST", "/posts", json: #"{"id":99,"body":null}"#).status == 201)
        let response = try await app.request("GET", "/posts?body=foo")
        #expect(response.status == 200)
        #expect(response.text == F.array([F.posts[0]]))
    }

    // MARK: POST /:resource

    @Test func createAnswers201WithTheNextID() async throws {
        let app = try await freshApp()
        let response = try await app.request("POST", "/posts", json: #"{"body":"foo","booleanValue":true,"integerValue":1}"#)
        #expect(response.status == 201)
        #expect(response.header("Location")?.hasSuffix("posts/3") == true)
        #expect(response.header("Content-Type")?.contains("json") == true)
        #expect(response.text == #"{"id":3,"body":"foo","booleanValue":true,"integerValue":1}"#)
        #expect(try await count("posts", on: app) == 3)
        #expect(response.header("Access-Control-Expose-Headers")?.contains("Location") == true)
    }

    /// json-server stores a form-encoded body with every value a string (201); ours refuses it with 415 and
    /// stores nothing (docs/json-server.md, where we differ).
    @Test func formEncodedBodyIs415() async throws {
        let app = try await freshApp()
        let response = try await app.request(
            "POST", "/posts", json: "body=foo&booleanValue=true&integerValue=1",
            headers: [("Content-Type", "application/x-www-form-urlencoded")])
        #expect(response.status == 415)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(try await count("posts", on: app) == 2)
    }

    /// json-server makes up a random string id in a collection whose ids are strings; ours gives the
    /// collection's next integer (docs/json-server.md, where we differ).
    @Test func createInStringIDCollection() async throws {
        let app = try await freshApp()
        let response = try await app.request("POST", "/refs", json: #"{"url":"http://foo.com","postId":1}"#)
        #expect(response.status == 201)
        #expect(response.header("Content-Type")?.contains("json") == true)
        #expect(response.text == #"{"id":1,"url":"http://foo.com","postId":1}"#)
        #expect(try await count("refs", on: app) == 2)
    }

    /// json-server answers `{"id":6,"postId":"1","body":"foo"}`: the link as the URL's text, after the id. Ours
    /// stores the parent id's own JSON type, after the body's members (docs/json-server.md, where we differ).
    @Test func nestedCreateSetsTheParentID() async throws {
        let app = try await freshApp()
        let response = try await app.request("POST", "/posts/1/comments", json: #"{"body":"foo"}"#)
        #expect(response.status == 201)
        #expect(response.text == #"{"id":6,"body":"foo","postId":1}"#)
    }

    // MARK: PUT /:resource/:id

    @Test func replaceAnswersAndStoresTheNewRecord() async throws {
        let app = try await freshApp()
        let post = #"{"id":1,"booleanValue":true,"integerValue":1}"#
        let response = try await app.request("PUT", "/posts/1", json: post, headers: [("Accept", "application/json")])
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.contains("json") == true)
        #expect(response.text == post)
        #expect(try await app.request("GET", "/posts/1").text == post)
    }

    /// json-server answers 404 `{}` for a PUT on an id that does not exist. Ours creates the record under the
    /// URL's id (201), which is how offline clients upload records made under their own ids; a body whose `id`
    /// names another record is refused (docs/json-server.md, where we differ).
    @Test func replaceOfAMissingRecord() async throws {
        let app = try await freshApp()
        let mismatched = try await app.request("PUT", "/posts/9001", json: #"{"id":1,"body":"bar"}"#)
        #expect(mismatched.status == 422, "\(mismatched.text)")
        #expect(mismatched.header("Content-Type") == "application/problem+json")
        #expect(try await app.request("GET", "/posts/1").text == F.posts[0])
        let created = try await app.request("PUT", "/posts/9001", json: #"{"body":"bar"}"#)
        #expect(created.status == 201)
        #expect(created.text == #"{"id":9001,"body":"bar"}"#)
    }

    // MARK: PATCH /:resource/:id

    @Test func updateMergesAndStores() async throws {
        let app = try await freshApp()
        let response = try await app.request("PATCH", "/posts/1", json: #"{"body":"bar"}"#)
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.contains("json") == true)
        #expect(response.text == #"{"id":1,"body":"bar"}"#)
        #expect(try await app.request("GET", "/posts/1").text == #"{"id":1,"body":"bar"}"#)
    }

    /// json-server: 404 with `{}`; ours: 404 with a problem document.
    @Test func updateOfAMissingRecordIs404() async throws {
        let app = try await freshApp()
        let response = try await app.request("PATCH", "/posts/9001", json: #"{"body":"bar"}"#)
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/problem+json")
    }

    // MARK: DELETE /:resource/:id

    /// json-server answers `{}`; ours answers the deleted record (docs/json-server.md, where we differ). Both
    /// delete the records that point at it: post 1's two comments.
    @Test func deleteRemovesTheRecordAndItsDependents() async throws {
        let app = try await freshApp()
        let response = try await app.request("DELETE", "/posts/1")
        #expect(response.status == 200)
        #expect(response.text == F.posts[0])
        #expect(try await count("posts", on: app) == 1)
        #expect(try await count("comments", on: app) == 3)
    }

    /// json-server: 404 with `{}`; ours: 404 with a problem document.
    @Test func deleteOfAMissingRecordIs404() async throws {
        let app = try await freshApp()
        let response = try await app.request("DELETE", "/posts/9001")
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/problem+json")
    }

    // MARK: _delay on writes

    /// POST, PUT, PATCH and DELETE with `_delay=1100` (four json-server cases), sent together to keep the suite fast.
    @Test func writesAreDelayed() async throws {
        let app = try await freshApp()
        let clock = ContinuousClock()
        let start = clock.now
        async let created = app.request("POST", "/posts?_delay=1100", json: #"{"body":"foo","booleanValue":true,"integerValue":1}"#)
        async let replaced = app.request("PUT", "/posts/1?_delay=1100", json: #"{"id":1,"booleanValue":true,"integerValue":1}"#)
        async let updated = app.request("PATCH", "/posts/1?_delay=1100", json: #"{"body":"bar"}"#)
        async let deleted = app.request("DELETE", "/posts/2?_delay=1100")
        let statuses = try await [created.status, replaced.status, updated.status, deleted.status]
        #expect(statuses == [201, 200, 200, 200])
        #expect(clock.now - start > .seconds(1))
    }
}
