import Foundation
import Testing
import TestSupport
import APITestSupport

// The rest of json-server 0.17.4's `__tests__/server/`, as plain HTTP calls: singular.js, schema-ignore.js,
// validate-data.js (through `PUT /db`, which loads a db.json as `--seed` does), mixins.js' createId and
// utils.js' getPage (through `_page`, whose Link they decide).
//
// Skipped, with the reason:
// - plural-fake.js and singular-fake.js (8 cases): the router option `_isFake`, where writes answer as if
//   done and change nothing; no command-line flag reaches it. Our nearest is `--read-only`, which answers 403
//   to every write instead of pretending. Their one reading case (`/posts/1/comments`) is plural.js' too.
// - plural-with-custom-foreign-key.js (8 cases): `--fks _id`; budget-server links records by `<singular>Id`
//   only (docs/json-server.md, where we differ).
// - mixins.js' getRemovable (2 cases): a helper whose effect, deleting what points at a deleted record, is
//   plural.js' DELETE case.
// - `__tests__/cli/`: the json-server command line (watch, routes file, snapshots), not the HTTP server.

/// singular.js and schema-ignore.js: one singular resource, reset before each case.
@Suite(.serialized) struct JSONServerSingularTests {
    static let user = #"{"name":"foo","email":"foo@example.com"}"#
    static let app = Task {
        let app = try await TestApp.jsonServerFixture()
        return app
    }

    func freshApp() async throws -> TestApp {
        let app = try await Self.app.value
        try await app.seed(#"{"user":\#(Self.user)}"#, replacing: true)
        return app
    }

    @Test func readsTheResource() async throws {
        let response = try await freshApp().request("GET", "/user")
        #expect(response.status == 200)
        #expect(response.text == Self.user)
    }

    /// json-server 0.17 answers a POST on a singular resource with 201 and the new object, which replaces it.
    @Test func postReplacesWith201() async throws {
        let app = try await freshApp()
        let response = try await app.request("POST", "/user", json: #"{"name":"bar"}"#)
        #expect(response.status == 201)
        #expect(response.text == #"{"name":"bar"}"#)
    }

    @Test func putReplaces() async throws {
        let response = try await freshApp().request("PUT", "/user", json: #"{"name":"bar"}"#)
        #expect(response.status == 200)
        #expect(response.text == #"{"name":"bar"}"#)
    }

    @Test func patchMerges() async throws {
        let response = try await freshApp().request("PATCH", "/user", json: #"{"name":"bar"}"#)
        #expect(response.status == 200)
        #expect(response.text == #"{"name":"bar","email":"foo@example.com"}"#)
    }

    /// schema-ignore.js: a top-level `$schema` is no resource and does not stop the load. It is not kept, so
    /// `GET /db` leaves it out (docs/json-server.md, where we differ).
    @Test func schemaMemberIsIgnored() async throws {
        let app = try await Self.app.value
        try await app.seed(#"{"$schema":"http://some.schema.somewhere/","user":\#(Self.user)}"#, replacing: true)
        let response = try await app.request("GET", "/user")
        #expect(response.status == 200)
        #expect(response.text == Self.user)
        let reset = try await app.request("PUT", "/db", json: #"{"$schema":"./schema.json","user":{"name":"bar"}}"#)
        #expect(reset.status == 200)
        #expect(reset.text == #"{"categories":[],"accounts":[],"transactions":[],"budgets":[],"schedules":[],"user":{"name":"bar"}}"#)
        #expect(try await app.request("GET", "/$schema").status == 404)
    }

    // MARK: validate-data.js

    @Test func collectionNameWithSlashIsRefused() async throws {
        let app = try await freshApp()
        let response = try await app.request("PUT", "/db", json: #"{"a/b":[]}"#)
        #expect(response.status == 400)
        #expect(response.text.contains("a/b"))
        #expect(try await app.request("GET", "/user").text == Self.user)
    }

    @Test func arrayDatabaseIsRefused() async throws {
        let app = try await freshApp()
        let response = try await app.request("PUT", "/db", json: "[]")
        #expect(response.status == 400)
        #expect(try await app.request("GET", "/user").text == Self.user)
    }

    @Test func objectOfArraysIsAccepted() async throws {
        let app = try await freshApp()
        let response = try await app.request("PUT", "/db", json: #"{"a":[]}"#)
        #expect(response.status == 200)
        #expect(try await app.request("GET", "/a").text == "[]")
    }

    // MARK: mixins.js, createId

    @Test func newIDFollowsTheLargest() async throws {
        let app = try await Self.app.value
        try await app.seed(#"{"comments":[{"id":1,"postId":1},{"id":2,"postId":2},{"id":3,"postId":2}]}"#, replacing: true)
        let response = try await app.request("POST", "/comments", json: "{}")
        #expect(response.text == #"{"id":4}"#)
    }

    /// json-server makes up a UUID where ids are strings; ours gives the next integer after the largest
    /// integer-looking id (docs/json-server.md, where we differ).
    @Test func newIDInStringIDCollection() async throws {
        let app = try await Self.app.value
        try await app.seed(#"{"photos":[{"id":"1"},{"id":"2"}]}"#, replacing: true)
        let response = try await app.request("POST", "/photos", json: "{}")
        #expect(response.status == 201)
        #expect(response.text == #"{"id":3}"#)
    }

    // MARK: utils.js, getPage (pages of 2 over five records)

    func page(_ query: String, records: Int = 5) async throws -> (ids: [Int], links: [String: Int]) {
        let app = try await Self.app.value
        try await app.seed(
            #"{"items":[\#((1...max(records, 1)).prefix(records).map { #"{"id":\#($0)}"# }.joined(separator: ","))]}"#, replacing: true)
        let response = try await app.request("GET", "/items?\(query)")
        #expect(response.status == 200)
        var links: [String: Int] = [:]
        for entry in (response.header("Link") ?? "").split(separator: ", ") {
            guard let page = entry.firstRange(of: "_page=").map({ entry[$0.upperBound...].prefix { $0.isNumber } }),
                let rel = entry.split(separator: "rel=\"").last?.dropLast()
            else { continue }
            links[String(rel)] = Int(page)
        }
        return (response.array.compactMap { $0["id"] as? Int }, links)
    }

    @Test func firstPage() async throws {
        let (ids, links) = try await page("_page=1&_limit=2")
        #expect(ids == [1, 2])
        #expect(links == ["first": 1, "next": 2, "last": 3])
    }

    @Test func secondPage() async throws {
        let (ids, links) = try await page("_page=2&_limit=2")
        #expect(ids == [3, 4])
        #expect(links == ["first": 1, "prev": 1, "next": 3, "last": 3])
    }

    @Test func lastPage() async throws {
        let (ids, links) = try await page("_page=3&_limit=2")
        #expect(ids == [5])
        #expect(links == ["first": 1, "prev": 2, "last": 3])
    }

    @Test func pagePastTheLastIsEmpty() async throws {
        let (ids, links) = try await page("_page=99&_limit=2")
        #expect(ids == [])
        #expect(links == [:])
    }

    @Test func pageLargerThanTheList() async throws {
        let (ids, links) = try await page("_page=1&_limit=99")
        #expect(ids == [1, 2, 3, 4, 5])
        #expect(links == [:])
    }

    @Test func pageOfAnEmptyList() async throws {
        let (ids, links) = try await page("_page=1&_limit=1", records: 0)
        #expect(ids == [])
        #expect(links == [:])
    }
}
