import HTTPServer
import Synchronization
import TestSupport
import Testing

/// What the handlers of these tests went through, read by the test while the server runs.
private final class HandlerProbe: Sendable {
    private struct Counts {
        var started = 0
        var cancelled = 0
        var finished = 0
    }

    private let counts = Mutex(Counts())

    var started: Int { counts.withLock { $0.started } }
    var cancelled: Int { counts.withLock { $0.cancelled } }
    var finished: Int { counts.withLock { $0.finished } }

    func recordStart() { counts.withLock { $0.started += 1 } }
    func recordEnd(wasCancelled: Bool) {
        counts.withLock { wasCancelled ? ($0.cancelled += 1) : ($0.finished += 1) }
    }
}

/// `/wait` parks like a long-poll until its Task is cancelled; `/pause` works briefly and answers.
private func makeDisconnectRouter(probe: HandlerProbe) -> Router<Void> {
    var router = Router<Void>()
    router.get("/wait") { _ in
        probe.recordStart()
        // Bounded, so a server that never cancels fails the test instead of leaving a Task behind for good.
        let giveUp = ContinuousClock.now + .seconds(60)
        while !Task.isCancelled && ContinuousClock.now < giveUp {
            try? await Task.sleep(for: .milliseconds(10))
        }
        probe.recordEnd(wasCancelled: Task.isCancelled)
        return .text("waited")
    }
    router.get("/pause") { _ in
        probe.recordStart()
        try? await Task.sleep(for: .milliseconds(200))
        probe.recordEnd(wasCancelled: Task.isCancelled)
        return .text("paused")
    }
    router.get("/hello") { _ in .text("hello") }
    return router
}

/// A `TestClient` handed from one `runOffCooperativePool` call to the next.
///
/// `@unchecked Sendable` invariant: each use happens inside one `runOffCooperativePool` call that the
/// test awaits before the next, so two threads never use the client at once.
private final class ClientBox: @unchecked Sendable {
    let client: TestClient

    init(port: Int) throws {
        client = try TestClient(port: port)
    }
}

extension OverRealSockets {
    @Suite struct Disconnects {
        @Test func clientClosingMidRequestCancelsItsHandler() async throws {
            let probe = HandlerProbe()
            try await withTestServer(handler: makeDisconnectRouter(probe: probe)) { port, _ in
                let box = try await runOffCooperativePool {
                    let box = try ClientBox(port: port)
                    try box.client.send("GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
                    return box
                }
                try await waitUntil("the handler has started") { probe.started == 1 }
                try await runOffCooperativePool { box.client.close() }
                try await waitUntil("the handler sees cancellation") { probe.cancelled == 1 }
                // The loop that dropped the connection still serves others.
                let next = try await runOffCooperativePool { try TestClient(port: port).request("GET", "/hello") }
                #expect(next.status == 200)
            }
            #expect(probe.finished == 0)
        }

        @Test func clientThatStaysIsAnsweredWithoutCancellation() async throws {
            let probe = HandlerProbe()
            try await withTestServer(handler: makeDisconnectRouter(probe: probe)) { port, _ in
                let response = try await runOffCooperativePool { try TestClient(port: port).request("GET", "/pause") }
                #expect(response.status == 200)
                #expect(response.text == "paused")
            }
            #expect(probe.finished == 1)
            #expect(probe.cancelled == 0)
        }

        @Test func shutdownCancelsHandlersStillRunningAtTheDeadline() async throws {
            let probe = HandlerProbe()
            let server = Server(
                configuration: ServerConfiguration(port: 0, eventLoopCount: 1),
                handler: makeDisconnectRouter(probe: probe), logger: LogCapture().logger()
            )
            let port = try server.start()
            let box = try await runOffCooperativePool {
                let box = try ClientBox(port: port)
                try box.client.send("GET /wait HTTP/1.1\r\nHost: a\r\n\r\n")
                return box
            }
            try await waitUntil("the handler has started") { probe.started == 1 }
            await server.shutdown(gracePeriod: .milliseconds(100))
            try await waitUntil("the handler sees cancellation") { probe.cancelled == 1 }
            let isClosed = try await runOffCooperativePool { box.client.isClosedByServer() }
            #expect(isClosed)
        }
    }
}
