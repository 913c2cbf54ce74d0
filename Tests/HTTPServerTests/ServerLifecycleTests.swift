import HTTPServer
import TestSupport
import Testing

extension OverRealSockets {
    @Suite struct Lifecycle {
        @Test func shutdownFinishesTheRequestInFlightAndClosesIdleConnections() async throws {
            let probe = SleepProbe()
            let server = Server(
                configuration: ServerConfiguration(port: 0, eventLoopCount: 1),
                handler: makeTestRouter(sleeps: probe), logger: LogCapture().logger()
            )
            let port = try server.start()
            let idle = try TestClient(port: port)
            #expect(try idle.request("GET", "/hello").status == 200)
            let busy = try TestClient(port: port)
            try busy.send("GET /hold HTTP/1.1\r\nHost: a\r\n\r\n")
            try await waitUntil("the handler runs") { probe.started == 1 }
            async let stopped: Void = server.shutdown(gracePeriod: .seconds(30))
            // The handler answers only once the shutdown has begun (the listener is gone): whatever the
            // machine's speed, the answer is one given while stopping.
            try await waitUntil("the server stops accepting") { (try? TestClient(port: port)) == nil }
            probe.release()
            await stopped
            let answer = try busy.readResponse()
            #expect(answer.status == 200)
            #expect(answer.text == "released")
            #expect(answer.header("Connection") == "close")
            #expect(busy.isClosedByServer())
            #expect(idle.isClosedByServer())
            #expect(throws: TestClient.Failure.self) { try TestClient(port: port) }
        }

        @Test func shutdownGivesUpOnSlowHandlersAfterTheGracePeriod() async throws {
            let probe = SleepProbe()
            let server = Server(
                configuration: ServerConfiguration(port: 0, eventLoopCount: 1),
                handler: makeTestRouter(sleeps: probe), logger: LogCapture().logger()
            )
            let port = try server.start()
            let busy = try TestClient(port: port)
            try busy.send("GET /sleep?ms=30000 HTTP/1.1\r\nHost: a\r\n\r\n")
            try await waitUntil("the handler runs") { probe.started == 1 }
            let start = ContinuousClock.now
            await server.shutdown(gracePeriod: .milliseconds(200))
            // Far below the handler's 30 s: the grace period ended the wait, not the handler.
            #expect(ContinuousClock.now - start < .seconds(15))
            #expect(busy.isClosedByServer())
        }

        @Test func hundredsOfIdleConnectionsDoNotBlockRequests() async throws {
            try await withTestServer { port, _ in
                var idle: [TestClient] = []
                for index in 0..<400 {
                    let client = try TestClient(port: port)
                    if index % 2 == 0 { #expect(try client.request("GET", "/hello").status == 200) }
                    idle.append(client)
                }
                let active = try TestClient(port: port)
                for id in 0..<20 {
                    #expect(try active.request("GET", "/items/\(id)").text == "item \(id)")
                }
                // The idle ones are still open and served.
                #expect(try idle[7].request("GET", "/hello").status == 200)
                #expect(try idle[400 - 2].request("GET", "/hello").status == 200)
            }
        }
    }
}
