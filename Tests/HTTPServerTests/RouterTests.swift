@testable import HTTPServer
import Testing

@Suite struct RouterTests {
    var router: Router<Void> {
        var router = Router<Void>()
        router.get("/items") { _ in .text("list") }
        router.post("/items") { _ in .text("created", status: .created) }
        router.get("/items/:id") { request in .text("item \(try request.parameters.require("id", as: Int.self))") }
        router.get("/items/new") { _ in .text("form") }
        router.delete("/items/:id/tags/:tag") { request in .text("\(request.parameters["id"]!)/\(request.parameters["tag"]!)") }
        return router
    }

    func text(_ response: Response) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func matchesLiteralsBeforeParameters() async throws {
        #expect(text(try await router.respond(to: Request(method: .get, target: "/items"))) == "list")
        #expect(text(try await router.respond(to: Request(method: .get, target: "/items/new"))) == "form")
        #expect(text(try await router.respond(to: Request(method: .get, target: "/items/42?x=1"))) == "item 42")
        #expect(text(try await router.respond(to: Request(method: .delete, target: "/items/7/tags/red%20hot"))) == "7/red hot")
    }

    @Test func listsEveryRegisteredRouteOnce() {
        #expect(
            router.routes.map(\.description) == [
                "GET /items", "POST /items", "GET /items/:id", "DELETE /items/:id/tags/:tag", "GET /items/new",
            ])
        #expect(router.mapHandlers { method, handlers in handlers[method]! }.routes == router.routes)
    }

    @Test func headIsServedByGet() async throws {
        #expect(text(try await router.respond(to: Request(method: .head, target: "/items"))) == "list")
    }

    @Test func unknownPathIs404() async {
        for target in ["/nothing", "/items/1/2", "/", "/items/"] {
            let error = await #expect(throws: Problem.self) { try await router.respond(to: Request(method: .get, target: target)) }
            #expect(error?.status == .notFound, "\(target)")
        }
    }

    @Test func wrongMethodIs405WithAllow() async {
        let error = await #expect(throws: Problem.self) { try await router.respond(to: Request(method: .put, target: "/items")) }
        #expect(error?.status == .methodNotAllowed)
        #expect(error?.headers["Allow"] == "GET, HEAD, POST")
    }

    @Test func badParameterIs400NamingIt() async {
        let error = await #expect(throws: Problem.self) { try await router.respond(to: Request(method: .get, target: "/items/abc")) }
        #expect(error?.status == .badRequest)
        #expect(error?.detail?.contains("'id'") == true)
        #expect(error?.errors.first?.field == "id")
    }

    @Test func middlewareWrapsOutermostFirst() async throws {
        struct Tag: Middleware {
            let name: String
            func respond(to request: Request, next: (Request) async throws -> Response) async throws -> Response {
                var response = try await next(request)
                response.headers.add("X-Order", name)
                return response
            }
        }
        let handler = router.wrapped(in: [Tag(name: "outer"), Tag(name: "inner")])
        let response = try await handler.respond(to: Request(method: .get, target: "/items"))
        #expect(response.headers.values(for: "x-order") == ["inner", "outer"])
    }
}

@Suite struct ModelTests {
    @Test func datesAreIMFFixdate() {
        // RFC 9110 §5.6.7's own example, and a date with one-digit fields.
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(1_772_844_305) == "Sat, 07 Mar 2026 00:45:05 GMT")
        #expect(HTTPDate.now().hasSuffix(" GMT"))
    }

    @Test func problemRendersRFC9457JSON() {
        let problem = Problem(
            .unprocessableContent, detail: "Bad \"input\"\n",
            errors: [.init(field: "amount", message: "must be positive")], headers: ["Retry-After": "1"]
        )
        let response = problem.response
        #expect(response.status.code == 422)
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(response.headers["Retry-After"] == "1")
        #expect(
            String(decoding: response.body, as: UTF8.self) == """
                {"type":"about:blank","title":"Unprocessable Content","status":422,"detail":"Bad \\"input\\"\\n",\
                "errors":[{"field":"amount","message":"must be positive"}]}
                """)
        #expect(
            String(decoding: Problem(.notFound).response.body, as: UTF8.self)
                == #"{"type":"about:blank","title":"Not Found","status":404}"#)
    }

    @Test func headersAreOrderedAndCaseInsensitive() {
        var headers: Headers = ["A": "1", "b": "2"]
        headers.add("a", "3")
        #expect(headers["a"] == "1")
        #expect(headers.values(for: "A") == ["1", "3"])
        headers.replaceOrAdd("A", "9")
        #expect(headers.values(for: "a") == ["9"])
        #expect(headers.map(\.name) == ["A", "b"])
        headers.remove("B")
        #expect(headers["b"] == nil)
    }

    @Test func requestDerivesPathQueryKeepAliveAndContentType() {
        let request = Request(
            method: .post, target: "/a%2Fb?x=1+2&x=3&y",
            headers: ["Content-Type": "Application/JSON; charset=utf-8", "Connection": "close", "X-Request-Id": "abc-1"]
        )
        #expect(request.path == "/a/b")
        #expect(request.queryValue("x") == "1 2")
        #expect(request.query.count == 3)
        #expect(request.contentType == "application/json")
        #expect(!request.isKeepAlive)
        #expect(request.id == "abc-1")
        let generated = Request(method: .get, target: "/", headers: ["X-Request-Id": "has space"])
        #expect(generated.id != "has space")
        #expect(generated.isKeepAlive)
        #expect(Request(method: .get, target: "/", headers: ["X-Request-Id": String(repeating: "a", count: 201)]).id.count < 201)
    }
}
