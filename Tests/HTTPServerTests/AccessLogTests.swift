import Foundation
@testable import HTTPServer
import Logging
import Testing
import TestSupport

extension LogCapture {
    /// The access log's events: the ones that name a route.
    var accessEvents: [LogEvent] {
        events.filter { $0.metadata?["route"] != nil }
    }
}

/// The route template reaches middleware outside the router, and the access log names it.
@Suite struct AccessLogTests {
    var router: Router {
        var router = Router()
        router.get("/items") { _ in .text("list") }
        router.get("/items/:id") { request in .text(request.route ?? "none") }
        router.delete("/items/:id") { _ in .text("deleted") }
        router.get("/items/:id/tags/:tag") { _ in .text("tag") }
        return router
    }

    @Test func routeForPathIsTheTemplateWhateverTheMethod() {
        #expect(router.route(for: "/items") == "/items")
        #expect(router.route(for: "/items/42") == "/items/:id")
        #expect(router.route(for: "/items/42/tags/red") == "/items/:id/tags/:tag")
        #expect(router.route(for: "/items/42/tags") == nil)
        #expect(router.route(for: "/nothing") == nil)
        #expect(router.route(for: "items") == nil)
    }

    @Test func routerTellsItsHandlerTheTemplate() async throws {
        let response = try await router.respond(to: Request(method: .get, target: "/items/7?x=1"))
        #expect(String(decoding: response.body, as: UTF8.self) == "/items/:id")
    }

    @Test func routeMiddlewareNamesRequestsAnsweredBeforeTheRouter() async throws {
        /// Answers by itself with the route it was told, as a CORS preflight or a 401 would.
        struct Echo: Middleware {
            func respond(to request: Request, next: any Handler) async throws -> Response {
                .text(request.route ?? "none")
            }
        }
        var router = self.router
        router.post("/:collection") { _ in .text("created") }
        let handler = router.wrapped(in: [RouteMiddleware(router: router, otherRoutes: ["/batch"]), Echo()])
        let expected = [
            ("/items/3", "/items/:id"), ("/items?x=1", "/items"), ("/posts", "/:collection"), ("/a/b/c", "none"),
            // A path a middleware answers is its own route, though a pattern matches it too.
            ("/batch", "/batch"),
        ]
        for (target, route) in expected {
            let response = try await handler.respond(to: Request(method: .post, target: target))
            #expect(String(decoding: response.body, as: UTF8.self) == route, "\(target)")
        }
    }

    @Test func accessLogCarriesRouteAndFieldsAsMetadata() async throws {
        let recorder = LogCapture()
        let router = self.router
        let handler = router.wrapped(in: [RouteMiddleware(router: router), AccessLogMiddleware(logger: recorder.logger())])
        _ = try await handler.respond(to: Request(method: .get, target: "/items/9?x=1", headers: ["X-Request-Id": "r-1"]))
        _ = try? await handler.respond(to: Request(method: .get, target: "/no/such/thing", headers: ["X-Request-Id": "r-2"]))
        _ = try? await handler.respond(to: Request(method: .put, target: "/items/9", headers: ["X-Request-Id": "r-3"]))

        let events = recorder.accessEvents
        try #require(events.count == 3)
        let found = events[0]
        #expect(found.level == .info)
        #expect(found.message.description.hasPrefix("GET /items/9?x=1 200 10 "))
        #expect(found.metadata?["request-id"] == "r-1")
        #expect(found.metadata?["method"] == "GET")
        #expect(found.metadata?["route"] == "/items/:id")
        #expect(found.metadata?["status"]?.description == "200")
        #expect(found.metadata?["bytes"]?.description == "10")
        #expect(Double(found.metadata?["duration_ms"]?.description ?? "") != nil)

        // A 404 has no route; a 405 has its path's route. A thrown answer has no byte count.
        #expect(events[1].metadata?["route"] == "unmatched")
        #expect(events[1].metadata?["status"]?.description == "404")
        #expect(events[1].metadata?["bytes"] == nil)
        #expect(events[2].metadata?["route"] == "/items/:id")
        #expect(events[2].metadata?["status"]?.description == "405")
    }

    @Test func accessLogOverASocketNamesTheRoute() async throws {
        let recorder = LogCapture()
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, eventLoopCount: 1)
        let router = makeTestRouter()
        let handler = router.wrapped(in: [RouteMiddleware(router: router), AccessLogMiddleware(logger: recorder.logger())])
        let server = Server(configuration: configuration, handler: handler, logger: recorder.logger())
        let port = try server.start()
        do {
            let response = try await runOffCooperativePool { try TestClient(port: port).request("GET", "/items/12") }
            #expect(response.status == 200)
            try await waitUntil("the access line is logged") { !recorder.accessEvents.isEmpty }
            let event = try #require(recorder.accessEvents.first)
            #expect(event.metadata?["route"] == "/items/:id")
            #expect(event.metadata?["request-id"]?.description == response.header("X-Request-Id"))
        } catch {
            await server.shutdown(gracePeriod: .seconds(1))
            throw error
        }
        await server.shutdown(gracePeriod: .seconds(1))
    }
}
