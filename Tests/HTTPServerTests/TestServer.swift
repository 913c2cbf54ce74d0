import HTTPServer
import TestSupport
import Logging
import Synchronization

/// Counts the `/sleep` and `/hold` handlers that have begun, so a test can wait until one runs instead of
/// sleeping, and lets `/hold` handlers go on when the test says so.
final class SleepProbe: Sendable {
    private let count = Atomic(0)
    private let released = Atomic(false)
    var started: Int { count.load(ordering: .acquiring) }
    func recordStart() { count.add(1, ordering: .releasing) }
    /// Lets every `/hold` handler answer.
    func release() { released.store(true, ordering: .releasing) }
    var isReleased: Bool { released.load(ordering: .acquiring) }
}

/// A tiny application for the socket tests.
func makeTestRouter(sleeps probe: SleepProbe = SleepProbe()) -> Router<Void> {
    struct Secret: Error { let password = "hunter2" }
    var router = Router<Void>()
    router.get("/hello") { _ in .text("hello") }
    router.post("/echo") { request in
        Response(status: .ok, headers: ["Content-Type": request.contentType ?? "application/octet-stream"], body: request.body)
    }
    router.get("/items/:id") { request in .text("item \(try request.parameters.require("id", as: Int.self))") }
    router.get("/sleep") { request in
        let milliseconds = Int(request.queryValue("ms") ?? "") ?? 100
        probe.recordStart()
        try await Task.sleep(for: .milliseconds(milliseconds))
        return .text("slept \(milliseconds)")
    }
    // Answers once the test calls `probe.release()`, and gives up after 30 s rather than hang a test.
    router.get("/hold") { _ in
        probe.recordStart()
        try await waitUntil("the test releases /hold", timeout: .seconds(30)) { probe.isReleased }
        return .text("released")
    }
    router.get("/fail") { _ in throw Secret() }
    router.get("/teapot") { _ in throw Problem(.init(code: 418, reason: "I'm a teapot"), detail: "short and stout") }
    return router
}

/// Runs `body` against a server on an ephemeral port, then shuts it down; by default it serves `makeTestRouter()`
/// behind an access log.
func withTestServer(
    handler: (any Handler)? = nil, limits: Limits = Limits(), log: LogCapture = LogCapture(),
    _ body: (_ port: Int, _ server: Server) async throws -> Void
) async throws {
    let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, limits: limits, eventLoopCount: 2)
    let handler =
        handler
        ?? RequestPipeline(
            router: makeTestRouter(), context: (), observers: [AccessLog(logger: log.logger())], logger: log.logger())
    let server = Server(configuration: configuration, handler: handler, logger: log.logger())
    let port = try server.start()
    do {
        try await body(port, server)
    } catch {
        await server.shutdown(gracePeriod: .seconds(1))
        throw error
    }
    await server.shutdown(gracePeriod: .seconds(1))
}
