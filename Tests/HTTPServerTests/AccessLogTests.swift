import Foundation
@testable import HTTPServer
import LogHandlers
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
    var router: Router<Void> {
        var router = Router<Void>()
        router.get("/items") { _ in .text("list") }
        router.get("/items/:id") { request in .text(request.route ?? "none") }
        router.delete("/items/:id") { _ in .text("deleted") }
        router.get("/items/:id/tags/:tag") { _ in .text("tag") }
        return router
    }

    @Test func resolveNamesTheRouteAndCapturesParametersOnce() {
        let expected: [(String, String?)] = [
            ("/items", "/items"), ("/items/42", "/items/:id"), ("/items/42/tags/red", "/items/:id/tags/:tag"),
            ("/items/42/tags", nil), ("/nothing", nil), ("items", nil),
        ]
        for (target, route) in expected {
            var request = Request(method: .get, target: target)
            let endpoint = router.resolve(&request)
            #expect(request.route == route, "\(target)")
            #expect(endpoint.isRouted == (route != nil), "\(target)")
        }
        var request = Request(method: .get, target: "/items/42/tags/red")
        _ = router.resolve(&request)
        #expect(request.parameters["id"] == "42")
        #expect(request.parameters["tag"] == "red")
        // A 405 names its path's route, though no handler takes the request.
        var put = Request(method: .put, target: "/items/9")
        #expect(!router.resolve(&put).isRouted)
        #expect(put.route == "/items/:id")
    }

    @Test func routerTellsItsHandlerTheTemplate() async throws {
        let response = try await router.respond(to: Request(method: .get, target: "/items/7?x=1"))
        #expect(String(decoding: response.body, as: UTF8.self) == "/items/:id")
    }

    @Test func requestsAGateRefusesAreNamedByTheirRoute() async throws {
        /// Refuses every request, as a missing token or a read-only server would, before its handler runs.
        struct Refuse: RequestGate {
            func check(_ request: Request) throws { throw Problem(.forbidden) }
        }
        let recorder = LogCapture()
        let pipeline = RequestPipeline(
            router: router, context: (), gates: [Refuse()], observers: [AccessLog(logger: recorder.logger())],
            logger: recorder.logger())
        for target in ["/items/3", "/items?x=1", "/a/b/c"] {
            let response = await pipeline.respond(to: Request(method: .get, target: target))
            #expect(response.status == .forbidden, "\(target)")
        }
        #expect(recorder.accessEvents.map { $0.metadata?["route"]?.description } == ["/items/:id", "/items", "unmatched"])
    }

    @Test func accessLogCarriesRouteAndFieldsAsMetadata() async throws {
        let recorder = LogCapture()
        let pipeline = RequestPipeline(
            router: router, context: (), observers: [AccessLog(logger: recorder.logger())], logger: recorder.logger())
        _ = await pipeline.respond(to: Request(method: .get, target: "/items/9?x=1", headers: ["X-Request-Id": "r-1"]))
        _ = await pipeline.respond(to: Request(method: .get, target: "/no/such/thing", headers: ["X-Request-Id": "r-2"]))
        _ = await pipeline.respond(to: Request(method: .put, target: "/items/9", headers: ["X-Request-Id": "r-3"]))

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

        // A 404 has no route; a 405 has its path's route. Both count the problem's bytes.
        #expect(events[1].metadata?["route"] == "unmatched")
        #expect(events[1].metadata?["status"]?.description == "404")
        #expect(Int(events[1].metadata?["bytes"]?.description ?? "") ?? 0 > 0)
        #expect(events[2].metadata?["route"] == "/items/:id")
        #expect(events[2].metadata?["status"]?.description == "405")
    }

    @Test func accessLogOverASocketNamesTheRoute() async throws {
        let recorder = LogCapture()
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, eventLoopCount: 1)
        let handler = RequestPipeline(
            router: makeTestRouter(), context: (), observers: [AccessLog(logger: recorder.logger())], logger: recorder.logger())
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

/// With LogHandlers' text handler the access line is written from the request's fields, and reads as the
/// swift-log line with the same message and metadata (docs/operations.md).
@Suite struct AccessLogHandlerTests {
    @Test func aTextHandlerGetsTheLineWithoutAMetadataDictionary() async throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let sink = LogSink(descriptor: ends[1])
        let logger = Logger(label: "budget-server") { label in TextLogHandler(label: label, sink: sink) }
        var router = Router<Void>()
        router.get("/items/:id") { _ in .text("item") }
        let pipeline = RequestPipeline(router: router, context: (), observers: [AccessLog(logger: logger)], logger: logger)
        _ = await pipeline.respond(to: Request(method: .get, target: "/items/9?x=1", headers: ["X-Request-Id": "r-1"]))
        _ = await pipeline.respond(to: Request(method: .get, target: "/nothing", headers: ["X-Request-Id": "r-2"]))
        sink.flush()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(ends[0], &buffer, buffer.count)
        let lines = String(decoding: buffer[0..<max(0, count)], as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(lines)")
        let found =
            #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ info budget-server: bytes=4 duration_ms=\d+\.\d{1,3} method=GET request-id=r-1 route=/items/:id status=200 \[HTTPServer\] GET /items/9\?x=1 200 4 \d+\.\d{3}ms$/#
        #expect(lines[0].wholeMatch(of: found) != nil, "\(lines[0])")
        let missing =
            #/^\S+ info budget-server: bytes=\d+ duration_ms=\S+ method=GET request-id=r-2 route=unmatched status=404 \[HTTPServer\] GET /nothing 404 \d+ \S+ms$/#
        #expect(lines[1].wholeMatch(of: missing) != nil, "\(lines[1])")
    }
}
