import HTTPServer
import TestSupport
import Testing

extension OverRealSockets {
    /// Framing faults are answered by the connection with problem+json, then the connection closes.
    @Suite struct FramingFaults {

        func expectFault(_ raw: String, status: Int, limits: Limits = Limits()) async throws {
            try await withTestServer(limits: limits) { port, _ in
                let client = try TestClient(port: port)
                try client.send(raw)
                let response = try client.readResponse()
                #expect(response.status == status, "\(raw.prefix(80).debugDescription)")
                #expect(response.header("Content-Type") == "application/problem+json")
                #expect(response.header("Connection") == "close")
                #expect(response.header("X-Request-Id") != nil)
                #expect(client.isClosedByServer())
            }
        }

        @Test func bodyOverTheLimitIs413() async throws {
            try await expectFault(
                "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2000\r\n\r\n" + String(repeating: "x", count: 2000),
                status: 413, limits: Limits(maxBodyBytes: 1000)
            )
            try await expectFault(
                "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + String(repeating: "x", count: 1024),
                status: 413, limits: Limits(maxBodyBytes: 1000)
            )
        }

        @Test func longRequestLineIs414() async throws {
            try await expectFault("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n", status: 414)
        }

        @Test func largeHeaderSectionIs431() async throws {
            let fields = (0..<20).map { "X-Field-\($0): " + String(repeating: "v", count: 1000) + "\r\n" }.joined()
            try await expectFault("GET /hello HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n", status: 431)
        }

        @Test func tooManyHeaderLinesIs431EvenWhenTheyAreSmall() async throws {
            let fields = (0..<10).map { "X-\($0): v\r\n" }.joined()
            try await expectFault("GET /hello HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n", status: 431, limits: Limits(maxHeaderCount: 10))
            try await withTestServer(limits: Limits(maxHeaderCount: 11)) { port, _ in
                let response = try await runOffCooperativePool {
                    try TestClient(port: port).request("GET", "/hello", headers: (0..<10).map { ("X-\($0)", "v") })
                }
                #expect(response.status == 200)
            }
        }

        @Test(arguments: [
            "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
            "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: 1\r\n folded\r\n\r\n",
            "GET /hello HTTP/1.1\nHost: a\n\n",
        ])
        func smugglingShapesAre400(raw: String) async throws {
            try await expectFault(raw, status: 400)
        }

        @Test func tricklingClientIsCutOffWith408() async throws {
            let limits = Limits(requestTimeout: .milliseconds(300))
            try await withTestServer(limits: limits) { port, _ in
                let client = try TestClient(port: port)
                let start = ContinuousClock.now
                for byte in "GET /hello HTTP/1.1\r\nHo".utf8 {
                    try client.send([byte])
                    try await Task.sleep(for: .milliseconds(30))
                    if ContinuousClock.now - start > .milliseconds(400) { break }
                }
                let response = try client.readResponse()
                // The request never completes, so only the server's timeout can produce this answer.
                #expect(response.status == 408)
                #expect(client.isClosedByServer())
            }
        }

        @Test func idleKeepAliveConnectionIsClosedSilently() async throws {
            try await withTestServer(limits: Limits(idleTimeout: .milliseconds(200))) { port, _ in
                let client = try TestClient(port: port)
                #expect(try client.request("GET", "/hello").status == 200)
                // The read waits for the close (bounded by the client's timeout), and no answer comes first.
                #expect(client.isClosedByServer())
            }
        }
    }
}

extension OverRealSockets {
    /// Limits on connections themselves (docs/operations.md, Limits): how many, how many requests each, and a header every answer carries.
    @Suite struct ConnectionLimits {
        @Test func theLastRequestAConnectionMayCarryIsAnsweredWithClose() async throws {
            try await withTestServer(limits: Limits(maxRequestsPerConnection: 3)) { port, _ in
                let (answers, closed) = try await runOffCooperativePool {
                    let client = try TestClient(port: port)
                    let answers = try (1...3).map { _ in try client.request("GET", "/hello") }
                    return (answers, client.isClosedByServer())
                }
                #expect(answers.map(\.status) == [200, 200, 200])
                #expect(answers.map { $0.header("Connection") } == [nil, nil, "close"])
                #expect(closed)
            }
        }

        @Test func connectionsOverTheLimitAre503AndTheOpenOnesGoOn() async throws {
            try await withTestServer(limits: Limits(maxConnections: 2)) { port, _ in
                let outcome = try await runOffCooperativePool {
                    let first = try TestClient(port: port)
                    let second = try TestClient(port: port)
                    // Both are counted once they answered; the third then finds the server full.
                    _ = try first.request("GET", "/hello")
                    _ = try second.request("GET", "/hello")
                    let third = try TestClient(port: port)
                    let refused = try third.readResponse()
                    let thirdClosed = third.isClosedByServer()
                    let stillServed = try first.request("GET", "/hello").status
                    second.close()
                    return (refused, thirdClosed, stillServed)
                }
                #expect(outcome.0.status == 503)
                #expect(outcome.0.header("Retry-After") == "1")
                #expect(outcome.0.header("Content-Type") == "application/problem+json")
                #expect(outcome.1)
                #expect(outcome.2 == 200)
                // A closed connection frees its place.
                try await waitUntil("a new connection is served again") {
                    let status = try? await runOffCooperativePool { try TestClient(port: port).request("GET", "/hello").status }
                    return status == 200
                }
            }
        }

        @Test func everyAnswerForbidsContentSniffing() async throws {
            try await withTestServer { port, _ in
                let answers = try await runOffCooperativePool {
                    [
                        try TestClient(port: port).request("GET", "/hello"),
                        try TestClient(port: port).request("GET", "/nowhere"),
                        try TestClient(port: port).request("GET", "/fail"),
                    ]
                }
                let fault = try await runOffCooperativePool {
                    let client = try TestClient(port: port)
                    try client.send("GET /hello HTTP/1.1\nHost: a\n\n")
                    return try client.readResponse()
                }
                for answer in answers + [fault] {
                    #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(answer.status)")
                }
                #expect(answers.map(\.status) == [200, 404, 500])
                #expect(fault.status == 400)
            }
        }
    }
}

/// `Limits.maxBodyBytesByPath`: a route's larger limit holds wherever the route sits, behind a prefix or an
/// owner's id, and nowhere else.
@Suite struct BodyLimitByPathTests {
    @Test func aPathsLimitMatchesItsEndOnASegmentBoundary() {
        var limits = Limits(maxBodyBytes: 1024)
        limits.maxBodyBytesByPath = ["/transactions/import": 16 * 1024]
        for path in ["/transactions/import", "/ledgers/7/transactions/import", "/accounts/3/transactions/import"] {
            #expect(limits.maxBodyBytes(forPath: path) == 16 * 1024, "\(path)")
        }
        for path in ["/transactions", "/transactions/import/x", "/mytransactions/import", "/transactions/importer"] {
            #expect(limits.maxBodyBytes(forPath: path) == 1024, "\(path)")
        }
    }
}
