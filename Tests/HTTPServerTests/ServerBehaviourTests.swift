import HTTPServer
import TestSupport
import Testing

/// Everything that talks to a real server. Serialized because `TestClient` blocks its thread,
/// and the cooperative pool of a 2-core machine has only two.
@Suite(.serialized) struct OverRealSockets {}

extension OverRealSockets {
    @Suite struct Behaviour {
        @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
            try await withTestServer { port, _ in
                let client = try TestClient(port: port)
                for id in 1...3 {
                    let response = try client.request("GET", "/items/\(id)")
                    #expect(response.status == 200)
                    #expect(response.text == "item \(id)")
                    #expect(response.header("Connection") == nil)
                    #expect(response.header("Content-Length") == "\("item \(id)".utf8.count)")
                }
            }
        }

        @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
            try await withTestServer { port, _ in
                let client = try TestClient(port: port)
                try client.send(
                    "GET /sleep?ms=150 HTTP/1.1\r\nHost: a\r\n\r\n"
                        + "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n"
                        + "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
                )
                #expect(try client.readResponse().text == "slept 150")
                #expect(try client.readResponse().text == "hello")
                #expect(try client.readResponse().text == "abc")
            }
        }

        @Test func headHasGetsHeadersButNoBody() async throws {
            try await withTestServer { port, _ in
                let client = try TestClient(port: port)
                let head = try client.request("HEAD", "/hello")
                #expect(head.status == 200)
                #expect(head.header("Content-Length") == "5")
                #expect(head.body.isEmpty)
                // Had a body been sent, it would now be read as the next status line.
                #expect(try client.request("GET", "/hello").text == "hello")
            }
        }

        @Test func expectContinueGetsInterimAnswerBeforeTheBody() async throws {
            try await withTestServer { port, _ in
                let client = try TestClient(port: port)
                try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
                #expect(try client.readResponse().status == 100)
                try client.send("hello")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.text == "hello")
            }
        }

        @Test func expectContinueOverTheLimitIs413WithoutReadingTheBody() async throws {
            try await withTestServer(limits: Limits(maxBodyBytes: 10)) { port, _ in
                let client = try TestClient(port: port)
                try client.send("POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 413)
                #expect(client.isClosedByServer())
            }
        }

        @Test func chunkedBodyIsEchoed() async throws {
            try await withTestServer { port, _ in
                let client = try TestClient(port: port)
                try client.send(
                    "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                        + "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n"
                )
                let response = try client.readResponse()
                #expect(response.text == "hello world")
                #expect(response.header("Content-Type") == "text/plain")
                #expect(try client.request("GET", "/hello").status == 200)
            }
        }

        @Test func unknownPathIs404AndWrongMethodIs405WithAllow() async throws {
            try await withTestServer { port, _ in
                let client = try TestClient(port: port)
                let missing = try client.request("GET", "/nope")
                #expect(missing.status == 404)
                #expect(missing.header("Content-Type") == "application/problem+json")
                let wrong = try client.request("DELETE", "/hello")
                #expect(wrong.status == 405)
                #expect(wrong.header("Allow") == "GET, HEAD")
                let badParameter = try client.request("GET", "/items/x")
                #expect(badParameter.status == 400)
            }
        }

        @Test func handlerErrorsBecomeProblemsWithoutInternals() async throws {
            let log = LogCapture()
            try await withTestServer(log: log) { port, _ in
                let client = try TestClient(port: port)
                let failure = try client.request("GET", "/fail", headers: [("X-Request-Id", "trace-500")])
                #expect(failure.status == 500)
                #expect(failure.header("Content-Type") == "application/problem+json")
                #expect(!failure.text.contains("hunter2"))
                #expect(!failure.text.contains("Secret"))
                #expect(failure.header("X-Request-Id") == "trace-500")
                let logged = log.events.filter { $0.level == .error }
                #expect(logged.count == 1)
                #expect(logged.first?.metadata?["request-id"]?.description == "trace-500")
                let teapot = try client.request("GET", "/teapot")
                #expect(teapot.status == 418)
                #expect(teapot.text.contains("short and stout"))
            }
        }

        @Test func requestIdIsEchoedWhenSaneAndGeneratedOtherwise() async throws {
            let log = LogCapture()
            try await withTestServer(log: log) { port, _ in
                let client = try TestClient(port: port)
                #expect(try client.request("GET", "/hello", headers: [("X-Request-Id", "abc-123")]).header("X-Request-Id") == "abc-123")
                let long = String(repeating: "x", count: 201)
                let generated = try client.request("GET", "/hello", headers: [("X-Request-Id", long)]).header("X-Request-Id")
                #expect(generated != nil && generated != long)
                let access = log.events.filter { $0.message.description.hasPrefix("GET /hello 200 5 ") }
                #expect(access.map { $0.metadata?["request-id"]?.description } == ["abc-123", generated])
            }
        }

        @Test func http10ClosesUnlessKeepAliveIsAsked() async throws {
            try await withTestServer { port, _ in
                let keep = try TestClient(port: port)
                try keep.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let first = try keep.readResponse()
                #expect(first.header("Connection") == "keep-alive")
                try keep.send("GET /hello HTTP/1.0\r\n\r\n")
                let second = try keep.readResponse()
                #expect(second.header("Connection") == "close")
                #expect(keep.isClosedByServer())
            }
        }

        @Test func connectionCloseIsHonoured() async throws {
            try await withTestServer { port, _ in
                let client = try TestClient(port: port)
                let response = try client.request("GET", "/hello", headers: [("Connection", "close")])
                #expect(response.header("Connection") == "close")
                #expect(client.isClosedByServer())
            }
        }

        @Test func aHandlersLineBreaksAndConnectionFieldsNeverReachTheWire() async throws {
            var router = Router<Void>()
            router.get("/fields") { _ in
                Response(
                    headers: Headers([
                        ("X-Before", "kept"), ("X-Split", "a\r\nSet-Cookie: forged=1"), ("X-Bare\nName", "b"),
                        ("X-Lf", "c\nd"), ("content-length", "999"), ("DATE", "yesterday"), ("X-After", "kept too"),
                    ]), body: Array("ok".utf8))
            }
            try await withTestServer(handler: router) { port, _ in
                let client = try TestClient(port: port)
                let response = try client.request("GET", "/fields")
                #expect(response.status == 200)
                #expect(response.text == "ok")
                let names = response.headers.map { $0.name.lowercased() }
                #expect(names == ["x-before", "x-after", "content-length", "date", "x-content-type-options", "x-request-id"])
                #expect(response.header("X-After") == "kept too")
                #expect(response.header("Content-Length") == "2")
                #expect(response.header("Date") != "yesterday")
                // The connection is still in step: the next answer is read whole.
                #expect(try client.request("GET", "/fields").text == "ok")
            }
        }
    }
}
