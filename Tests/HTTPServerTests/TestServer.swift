import HTTPServer
import Logging
import Synchronization

/// Log lines captured from the server under test, so a test can check what was logged.
final class LogRecorder: Sendable {
    let lines = Mutex<[(level: Logger.Level, message: String, requestID: String?)]>([])

    var logger: Logger {
        Logger(label: "test") { _ in RecordingHandler(recorder: self) }
    }

    private struct RecordingHandler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let id = event.metadata?["request-id"].map { "\($0)" }
            recorder.lines.withLock { $0.append((event.level, "\(event.message)", id)) }
        }
    }
}

/// A tiny application for the socket tests.
func makeTestRouter() -> Router {
    struct Secret: Error { let password = "hunter2" }
    var router = Router()
    router.get("/hello") { _ in .text("hello") }
    router.post("/echo") { request in
        Response(status: .ok, headers: ["Content-Type": request.contentType ?? "application/octet-stream"], body: request.body)
    }
    router.get("/items/:id") { request in .text("item \(try request.parameters.require("id", as: Int.self))") }
    router.get("/sleep") { request in
        let milliseconds = Int(request.queryValue("ms") ?? "") ?? 100
        try await Task.sleep(for: .milliseconds(milliseconds))
        return .text("slept \(milliseconds)")
    }
    router.get("/fail") { _ in throw Secret() }
    router.get("/teapot") { _ in throw Problem(.init(code: 418, reason: "I'm a teapot"), detail: "short and stout") }
    return router
}

/// Runs `body` against a server on an ephemeral port, then shuts it down.
func withTestServer(
    limits: Limits = Limits(), recorder: LogRecorder = LogRecorder(),
    _ body: (_ port: Int, _ server: Server) async throws -> Void
) async throws {
    let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, limits: limits, eventLoopCount: 2)
    let handler = makeTestRouter().wrapped(in: [AccessLogMiddleware(logger: recorder.logger)])
    let server = Server(configuration: configuration, handler: handler, logger: recorder.logger)
    let port = try server.start()
    do {
        try await body(port, server)
    } catch {
        await server.shutdown(gracePeriod: .seconds(1))
        throw error
    }
    await server.shutdown(gracePeriod: .seconds(1))
}
