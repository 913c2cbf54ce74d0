import HTTPServer
import Synchronization
import TestSupport
import Testing

@Suite struct EntityTagTests {
    // MARK: Parsing If-Match / If-None-Match

    @Test(arguments: [
        ("*", EntityTagCondition.any),
        (" * ", .any),
        ("\"abc\"", .tags([EntityTag(opaqueTag: "abc")])),
        ("W/\"abc\"", .tags([EntityTag(opaqueTag: "abc", isWeak: true)])),
        ("\"\"", .tags([EntityTag(opaqueTag: "")])),
        ("\"a\", W/\"b\" ,\t\"c\"", .tags([EntityTag(opaqueTag: "a"), EntityTag(opaqueTag: "b", isWeak: true), EntityTag(opaqueTag: "c")])),
        // etagc includes the comma, so a list must be scanned, not split.
        ("\"a,b\", \"c\"", .tags([EntityTag(opaqueTag: "a,b"), EntityTag(opaqueTag: "c")])),
        // RFC 9110 §5.6.1: empty list elements are accepted and count for nothing.
        (", \"a\",, ,\"b\",", .tags([EntityTag(opaqueTag: "a"), EntityTag(opaqueTag: "b")])),
        ("\"!#~\"", .tags([EntityTag(opaqueTag: "!#~")])),
        ("\"café\"", .tags([EntityTag(opaqueTag: "café")])),
    ])
    func parsesValidConditions(value: String, expected: EntityTagCondition) {
        #expect(EntityTagCondition(headerValue: value) == expected)
    }

    @Test(arguments: [
        "abc", "\"abc", "abc\"", "w/\"abc\"", "W/abc", "W/ \"abc\"", "W\"abc\"", "\"a\" \"b\"", "\"a\"b",
        "\"a b\"", "\"a\tb\"", "\"a\\\"b\"", "*, \"a\"", "\"a\", *", "**", "* *", "W/*", "\"a\";", "\u{7F}",
        // No tag at all is no condition a client can have meant.
        "", " , ",
    ])
    func rejectsMalformedConditions(value: String) {
        #expect(EntityTagCondition(headerValue: value) == nil)
    }

    /// The example table of RFC 9110 §8.8.3.2.
    @Test(arguments: [
        (EntityTag(opaqueTag: "1", isWeak: true), EntityTag(opaqueTag: "1", isWeak: true), false, true),
        (EntityTag(opaqueTag: "1", isWeak: true), EntityTag(opaqueTag: "2", isWeak: true), false, false),
        (EntityTag(opaqueTag: "1", isWeak: true), EntityTag(opaqueTag: "1"), false, true),
        (EntityTag(opaqueTag: "1"), EntityTag(opaqueTag: "1"), true, true),
    ])
    func comparesStronglyAndWeaklyAsRFC9110Says(listed: EntityTag, current: EntityTag, strongly: Bool, weakly: Bool) {
        #expect(EntityTagCondition.tags([listed]).matchesStrongly(current) == strongly)
        #expect(EntityTagCondition.tags([listed]).matchesWeakly(current) == weakly)
        // The comparison is symmetric.
        #expect(EntityTagCondition.tags([current]).matchesStrongly(listed) == strongly)
        #expect(EntityTagCondition.tags([current]).matchesWeakly(listed) == weakly)
    }

    @Test func anyListedTagMatches() {
        let condition = EntityTagCondition.tags([EntityTag(opaqueTag: "a"), EntityTag(opaqueTag: "b")])
        #expect(condition.matchesStrongly(EntityTag(opaqueTag: "b")))
        #expect(!condition.matchesStrongly(EntityTag(opaqueTag: "c")))
        #expect(!EntityTagCondition.tags([]).matchesWeakly(EntityTag(opaqueTag: "a")))
    }

    @Test func starMatchesOnlyAnExistingRepresentation() {
        #expect(EntityTagCondition.any.matchesStrongly(EntityTag(opaqueTag: "x", isWeak: true)))
        #expect(EntityTagCondition.any.matchesWeakly(EntityTag(opaqueTag: "x")))
        #expect(!EntityTagCondition.any.matchesStrongly(nil))
        #expect(!EntityTagCondition.any.matchesWeakly(nil))
        #expect(!EntityTagCondition.tags([EntityTag(opaqueTag: "x")]).matchesWeakly(nil))
    }

    @Test func headerValueQuotesAndMarksWeakness() {
        #expect(EntityTag(opaqueTag: "abc").headerValue == "\"abc\"")
        #expect(EntityTag(opaqueTag: "abc", isWeak: true).headerValue == "W/\"abc\"")
        let tag = EntityTag(opaqueTag: "v7", isWeak: true)
        #expect(EntityTagCondition(headerValue: tag.headerValue) == .tags([tag]))
    }

    // MARK: Reading the condition from a request

    @Test func absentHeaderIsNoCondition() throws {
        #expect(try Request(method: .get, target: "/").entityTagCondition("If-None-Match") == nil)
    }

    @Test func repeatedHeaderLinesFormOneList() throws {
        let request = Request(method: .get, target: "/", headers: Headers([("If-None-Match", "\"a\""), ("if-none-match", "W/\"b\"")]))
        let expected = EntityTagCondition.tags([EntityTag(opaqueTag: "a"), EntityTag(opaqueTag: "b", isWeak: true)])
        #expect(try request.entityTagCondition("If-None-Match") == expected)
    }

    @Test func starOnOneOfSeveralLinesIsMalformed() {
        let request = Request(method: .get, target: "/", headers: Headers([("If-Match", "*"), ("If-Match", "\"a\"")]))
        #expect(throws: Problem.self) { try request.entityTagCondition("If-Match") }
    }

    @Test func malformedHeaderIsA400NamingIt() throws {
        let request = Request(method: .put, target: "/", headers: ["If-Match": "abc"])
        let error = #expect(throws: Problem.self) { try request.entityTagCondition("If-Match") }
        #expect(error?.status == .badRequest)
        #expect(error?.detail?.contains("If-Match") == true)
        #expect(error?.response.headers["Content-Type"] == "application/problem+json")
    }

    @Test(arguments: ["%22abc%22", " %22abc%22", "\t%22*%22", "%22"])
    func percentEncodedValueIsA400NamingTheCauseAndTheAdvice(value: String) throws {
        let request = Request(method: .put, target: "/", headers: ["If-Match": value])
        let error = #expect(throws: Problem.self) { try request.entityTagCondition("If-Match", percentEncodingAdvice: "See the docs.") }
        #expect(error?.status == .badRequest)
        #expect(error?.detail?.contains("If-Match header's value starts with %22") == true)
        #expect(error?.detail?.hasSuffix("quotes included. See the docs.") == true, "\(error?.detail ?? "")")
        #expect(error?.errors.map(\.field) == ["If-Match"])
    }

    @Test(arguments: [("%22a", true), ("  %22", true), ("%2", false), ("%2F22", false), ("a%22", false), ("\"%22\"", false), ("", false)])
    func encodedQuoteIsSeenOnlyAtTheStart(value: String, expected: Bool) {
        #expect(PercentEncodedHeader.startsWithEncodedQuote(value) == expected)
    }

    // MARK: Computing a strong tag

    @Test func sameRepresentationGivesTheSameKnownTag() {
        let tag = EntityTag.strong(for: .text("hello"), including: [])
        #expect(tag == EntityTag.strong(for: .text("hello"), including: []))
        #expect(!tag.isWeak)
        // Pinned so a change of hashing (or a per-process seed) cannot slip in: every replica must agree.
        #expect(tag.opaqueTag == "c6402d15196824a049ad87c371a5047a")
        var counted = Response.text("hello")
        counted.headers.add("X-Total-Count", "3")
        #expect(EntityTag.strong(for: counted, including: ["X-Total-Count"]).opaqueTag == "d00cc237bbfe477cacf0f59e0e6caa08")
    }

    @Test func anyChangedByteChangesTheTag() {
        let original = EntityTag.strong(for: .text("hello"), including: [])
        for changed in ["hellp", "Hello", "hello ", "hell", ""] {
            #expect(EntityTag.strong(for: .text(changed), including: []) != original, "body \(changed)")
        }
    }

    @Test func listedHeadersArePartOfTheTag() {
        func tag(count: String?, headers: [String] = ["X-Total-Count"]) -> EntityTag {
            var response = Response.json(Array("[]".utf8))
            if let count { response.headers.add("X-Total-Count", count) }
            return EntityTag.strong(for: response, including: headers)
        }
        #expect(tag(count: "1") == tag(count: "1"))
        #expect(tag(count: "1") != tag(count: "2"))
        #expect(tag(count: "") != tag(count: nil))
        #expect(tag(count: "1", headers: ["x-total-count"]) == tag(count: "1"))
        // Headers not listed are not part of the representation the tag names.
        #expect(tag(count: "1", headers: []) == tag(count: "2", headers: []))
    }

    @Test func bytesMovedBetweenPartsChangeTheTag() {
        var bodyHeavy = Response(body: Array("ab".utf8))
        bodyHeavy.headers.add("A", "c")
        var headerHeavy = Response(body: Array("a".utf8))
        headerHeavy.headers.add("A", "bc")
        #expect(EntityTag.strong(for: bodyHeavy, including: ["A"]) != EntityTag.strong(for: headerHeavy, including: ["A"]))
        var first = Response()
        first.headers.add("A", "xy")
        var second = Response()
        second.headers.add("A", "x")
        second.headers.add("B", "y")
        #expect(EntityTag.strong(for: first, including: ["A", "B"]) != EntityTag.strong(for: second, including: ["A", "B"]))
    }

    @Test func tagIs32LowerCaseHexCharacters() {
        let tag = EntityTag.strong(for: Response(body: Array(0...255)), including: [])
        #expect(tag.opaqueTag.utf8.count == 32)
        #expect(tag.opaqueTag.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    }

    // MARK: The middleware, without sockets

    private func respond(_ method: HTTPServer.Method, headers: Headers = Headers(), with response: Response) async throws -> Response {
        let request = Request(method: method, target: "/things/1", headers: headers)
        return try await EntityTagMiddleware().respond(to: request) { _ in response }
    }

    @Test func tagsSuccessfulRepresentations() async throws {
        var created = Response.json(Array("{}".utf8), status: .created)
        created.headers.add("Location", "/things/1")
        let tagged: [(HTTPServer.Method, Response)] = [
            (.get, .text("a")), (.head, .text("a")), (.put, .text("a")), (.put, .text("a", status: .created)),
            (.patch, .text("a")), (.patch, .text("a", status: .created)), (.post, created),
        ]
        for (method, response) in tagged {
            let answer = try await respond(method, with: response)
            #expect(answer.headers["ETag"] == EntityTag.strong(for: response, including: []).headerValue, "\(method) \(response.status)")
        }
    }

    @Test func leavesOtherAnswersUntagged() async throws {
        let untagged: [(HTTPServer.Method, Response)] = [
            (.get, .text("gone", status: .notFound)), (.get, Response(status: .noContent)),
            (.post, .text("a", status: .created)), (.post, .text("a")), (.delete, .text("a")),
            (.options, .text("a")), (.put, Response(status: .noContent)),
        ]
        for (method, response) in untagged {
            let answer = try await respond(method, with: response)
            #expect(answer.headers["ETag"] == nil, "\(method) \(response.status)")
        }
    }

    @Test func keepsAndComparesTheHandlersOwnTag() async throws {
        var versioned = Response.text("v3")
        versioned.headers.add("ETag", "W/\"3\"")
        let plain = try await respond(.get, with: versioned)
        #expect(plain.headers.values(for: "ETag") == ["W/\"3\""])
        let conditional = try await respond(.get, headers: ["If-None-Match": "\"3\""], with: versioned)
        #expect(conditional.status == .notModified)
        #expect(conditional.headers["ETag"] == "W/\"3\"")
    }

    @Test func notModifiedKeepsHeadersButContentType() async throws {
        var response = Response.json(Array("[1]".utf8))
        response.headers.add("X-Total-Count", "1")
        response.headers.add("Vary", "Origin")
        let tag = EntityTag.strong(for: response, including: [])
        let answer = try await respond(.get, headers: ["If-None-Match": tag.headerValue], with: response)
        #expect(answer.status == .notModified)
        #expect(answer.body.isEmpty)
        #expect(answer.headers["Content-Type"] == nil)
        #expect(answer.headers["ETag"] == tag.headerValue)
        #expect(answer.headers["X-Total-Count"] == "1")
        #expect(answer.headers["Vary"] == "Origin")
    }

    @Test func ifNoneMatchIsIgnoredOnErrorsAndWrites() async throws {
        let missing = try await respond(.get, headers: ["If-None-Match": "*"], with: .text("no", status: .notFound))
        #expect(missing.status == .notFound)
        let put = try await respond(.put, headers: ["If-None-Match": "*"], with: .text("a"))
        #expect(put.status == .ok)
        // Only reads look at If-None-Match here, so a malformed one on a write is not this middleware's to reject.
        let malformedOnWrite = try await respond(.patch, headers: ["If-None-Match": "nonsense"], with: .text("a"))
        #expect(malformedOnWrite.status == .ok)
    }

    @Test func malformedIfNoneMatchOnReadIs400() async throws {
        await #expect(throws: Problem.self) { try await respond(.get, headers: ["If-None-Match": "nonsense"], with: .text("a")) }
    }
}

/// The greeting a test server hands out, changeable by the test between requests.
private final class Greeting: Sendable {
    let text = Mutex("hello")
}

private func makeEntityTagRouter(greeting: Greeting) -> any Handler {
    var router = Router<Void>()
    router.get("/greeting") { _ in
        var response = Response.text(greeting.text.withLock { $0 })
        response.headers.add("X-Total-Count", "1")
        return response
    }
    return router.wrapped(in: [EntityTagMiddleware(representationHeaders: ["X-Total-Count"])])
}

extension OverRealSockets {
    @Suite struct EntityTagsOverSockets {
        @Test func getCarriesTheStrongTagOfWhatTheHandlerAnswered() async throws {
            try await withTestServer(handler: makeEntityTagRouter(greeting: Greeting())) { port, _ in
                let response = try await runOffCooperativePool { try TestClient(port: port).request("GET", "/greeting") }
                var expected = Response.text("hello")
                expected.headers.add("X-Total-Count", "1")
                #expect(response.status == 200)
                #expect(response.header("ETag") == EntityTag.strong(for: expected, including: ["X-Total-Count"]).headerValue)
            }
        }

        @Test func matchingIfNoneMatchIs304WithTheTagAndNoBody() async throws {
            try await withTestServer(handler: makeEntityTagRouter(greeting: Greeting())) { port, _ in
                let (first, strong, weak, after) = try await runOffCooperativePool {
                    let client = try TestClient(port: port)
                    let first = try client.request("GET", "/greeting")
                    let tag = first.header("ETag") ?? ""
                    let strong = try client.request("GET", "/greeting", headers: [("If-None-Match", "\"other\", \(tag)")])
                    let weak = try client.request("GET", "/greeting", headers: [("If-None-Match", "W/\(tag)")])
                    // Had the 304 carried a body, it would now be read as this answer's status line.
                    let after = try client.request("GET", "/greeting")
                    return (first, strong, weak, after)
                }
                for notModified in [strong, weak] {
                    #expect(notModified.status == 304)
                    #expect(notModified.body.isEmpty)
                    #expect(notModified.header("ETag") == first.header("ETag"))
                    #expect(notModified.header("X-Total-Count") == "1")
                    #expect(notModified.header("Content-Type") == nil)
                    #expect(notModified.header("Content-Length") == nil)
                }
                #expect(after.status == 200)
                #expect(after.text == "hello")
            }
        }

        @Test func staleTagGetsTheNewRepresentation() async throws {
            let greeting = Greeting()
            try await withTestServer(handler: makeEntityTagRouter(greeting: greeting)) { port, _ in
                let before = try await runOffCooperativePool { try TestClient(port: port).request("GET", "/greeting") }
                greeting.text.withLock { $0 = "hello again" }
                let staleTag = before.header("ETag") ?? ""
                let after = try await runOffCooperativePool {
                    try TestClient(port: port).request("GET", "/greeting", headers: [("If-None-Match", staleTag)])
                }
                #expect(after.status == 200)
                #expect(after.text == "hello again")
                #expect(after.header("ETag") != nil)
                #expect(after.header("ETag") != before.header("ETag"))
            }
        }

        @Test func starIs304() async throws {
            try await withTestServer(handler: makeEntityTagRouter(greeting: Greeting())) { port, _ in
                let response = try await runOffCooperativePool {
                    try TestClient(port: port).request("GET", "/greeting", headers: [("If-None-Match", "*")])
                }
                #expect(response.status == 304)
                #expect(response.header("ETag") != nil)
            }
        }

        @Test func malformedIfNoneMatchIs400Problem() async throws {
            try await withTestServer(handler: makeEntityTagRouter(greeting: Greeting())) { port, _ in
                let response = try await runOffCooperativePool {
                    try TestClient(port: port).request("GET", "/greeting", headers: [("If-None-Match", "not-quoted")])
                }
                #expect(response.status == 400)
                #expect(response.header("Content-Type") == "application/problem+json")
                #expect(response.text.contains("If-None-Match"))
            }
        }

        @Test func percentEncodedIfNoneMatchIs400NamingTheCause() async throws {
            try await withTestServer(handler: makeEntityTagRouter(greeting: Greeting())) { port, _ in
                let response = try await runOffCooperativePool {
                    try TestClient(port: port).request("GET", "/greeting", headers: [("If-None-Match", "%22d65b3ca54d8e854940a05464a4cb2a3d%22")])
                }
                #expect(response.status == 400)
                #expect(response.header("Content-Type") == "application/problem+json")
                #expect(response.text.contains("percent-encoded the header value"), "\(response.text)")
            }
        }

        @Test func headBehavesLikeGet() async throws {
            try await withTestServer(handler: makeEntityTagRouter(greeting: Greeting())) { port, _ in
                let (get, head, conditionalHead) = try await runOffCooperativePool {
                    let client = try TestClient(port: port)
                    let get = try client.request("GET", "/greeting")
                    let head = try client.request("HEAD", "/greeting")
                    let conditionalHead = try client.request("HEAD", "/greeting", headers: [("If-None-Match", get.header("ETag") ?? "")])
                    return (get, head, conditionalHead)
                }
                #expect(head.status == 200)
                #expect(head.header("ETag") == get.header("ETag"))
                #expect(head.header("Content-Length") == "5")
                #expect(conditionalHead.status == 304)
                #expect(conditionalHead.header("ETag") == get.header("ETag"))
            }
        }
    }
}
