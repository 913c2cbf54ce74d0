@testable import HTTPServer
import Logging
import Testing
import TestSupport

/// RFC 7239's `Forwarded` grammar as a table of raw field values, and how a trusted origin is resolved.
@Suite struct ForwardedTests {
    @Test(
        arguments: [
            ("for=192.0.2.60;proto=http;by=203.0.113.43", [ForwardedElement(forNode: "192.0.2.60", byNode: "203.0.113.43", proto: "http")]),
            // RFC 7239 §4's own examples.
            (#"For="[2001:db8:cafe::17]:4711""#, [ForwardedElement(forNode: "2001:db8:cafe::17")]),
            ("for=192.0.2.43, for=198.51.100.17", [ForwardedElement(forNode: "192.0.2.43"), ForwardedElement(forNode: "198.51.100.17")]),
            (
                #"for=192.0.2.43,for="[2001:db8:cafe::17]",for=unknown"#,
                [ForwardedElement(forNode: "192.0.2.43"), ForwardedElement(forNode: "2001:db8:cafe::17"), ForwardedElement(forNode: "unknown")]
            ),
            ("for=_hidden, for=_SEVKISEK", [ForwardedElement(forNode: "_hidden"), ForwardedElement(forNode: "_SEVKISEK")]),
            (#"PROTO=HTTPS;Host="api.example.com:8443""#, [ForwardedElement(host: "api.example.com:8443", proto: "https")]),
            (#"host="[::1]:3000""#, [ForwardedElement(host: "[::1]:3000")]),
            (#"for="192.0.2.1:_port";proto="https""#, [ForwardedElement(forNode: "192.0.2.1", proto: "https")]),
            // An extension parameter is allowed and dropped; empty pairs and list elements are allowed.
            ("for=192.0.2.1;secret=x;;", [ForwardedElement(forNode: "192.0.2.1")]),
            ("for=192.0.2.1;", [ForwardedElement(forNode: "192.0.2.1")]),
            (" , for=192.0.2.1 ,, ", [ForwardedElement(forNode: "192.0.2.1")]),
            // Whitespace around ';' is tolerated.
            ("for=192.0.2.1 ; proto=https", [ForwardedElement(forNode: "192.0.2.1", proto: "https")]),
            (#"for="\1\9\2.0.2.1""#, [ForwardedElement(forNode: "192.0.2.1")]),
        ] as [(String, [ForwardedElement])])
    func wellFormedFieldsParse(field: String, expected: [ForwardedElement]) {
        #expect(ForwardedElement.parseList([field]) == expected)
    }

    @Test(arguments: [
        "", " ", "for", "for=", "for=;proto=http", "=192.0.2.1",
        "for=192.0.2.1;for=192.0.2.2",  // a parameter twice in one element
        "for=2001:db8::1",  // IPv6 must be quoted and bracketed
        #"for="[2001:db8::1""#, #"for="[192.0.2.1]""#, "for=192.0.2", "for=192.0.2.256", "for=0x7f.1.1.1",
        "for=example.com", "for=_", "for=192.0.2.1:99999", "for=192.0.2.1:", #"for="192.0.2.1"x"#,
        #"for="192.0.2.1"#,  // unterminated quoted-string
        "proto=1http", "proto=ht/tp", "host=a/b", "host=a b", #"host="a>b""#, "host=a:b:c", "host=:80", "host=a:80x",
        #"host="[zz::1]""#, "host=api.example.com:8443",  // ':' is no token character: quote it "for=192.0.2.1 for=192.0.2.2", "by=nothing",
    ])
    func malformedFieldsAreRefusedWhole(field: String) {
        #expect(ForwardedElement.parseList([field]) == nil, "\(field)")
    }

    @Test func oneFieldOverSeveralLinesIsOneList() {
        let elements = ForwardedElement.parseList(["for=192.0.2.1", "for=198.51.100.2;proto=https"])
        #expect(elements == [ForwardedElement(forNode: "192.0.2.1"), ForwardedElement(forNode: "198.51.100.2", proto: "https")])
        // A bad line spoils the whole field, so no element of it is trusted.
        #expect(ForwardedElement.parseList(["for=192.0.2.1", "for=nonsense"]) == nil)
    }

    let direct = ClientOrigin(host: "internal:3000", address: "10.0.0.5")

    @Test func forwardedTakesTheFirstElementAndWinsOverXForwarded() {
        let headers: Headers = [
            "Forwarded": "for=192.0.2.60;proto=https;host=api.example.com, for=10.0.0.9;proto=http;host=internal",
            "X-Forwarded-For": "198.51.100.1", "X-Forwarded-Proto": "http", "X-Forwarded-Host": "other.example",
        ]
        #expect(
            ClientOrigin.forwarded(headers: headers, direct: direct)
                == ClientOrigin(scheme: "https", host: "api.example.com", address: "192.0.2.60"))
    }

    @Test func eachPartFallsBackOnItsOwn() {
        // Forwarded names only the client; scheme and host come from X-Forwarded-*, or else the connection.
        let headers: Headers = ["Forwarded": "for=192.0.2.60", "X-Forwarded-Proto": "https"]
        #expect(
            ClientOrigin.forwarded(headers: headers, direct: direct)
                == ClientOrigin(scheme: "https", host: "internal:3000", address: "192.0.2.60"))
    }

    @Test func xForwardedFieldsTakeTheirFirstItem() {
        let headers: Headers = [
            "X-Forwarded-For": "2001:db8::7, 10.0.0.9", "X-Forwarded-Proto": "HTTPS, http",
            "X-Forwarded-Host": "api.example.com:8443",
        ]
        #expect(
            ClientOrigin.forwarded(headers: headers, direct: direct)
                == ClientOrigin(scheme: "https", host: "api.example.com:8443", address: "2001:db8::7"))
        #expect(ClientOrigin.forwarded(headers: ["X-Forwarded-For": "[2001:db8::7]"], direct: direct).address == "2001:db8::7")
    }

    @Test func malformedOrUnusableValuesAreIgnored() {
        // A malformed Forwarded is ignored whole, so X-Forwarded-* applies.
        let headers: Headers = ["Forwarded": "for=192.0.2.60;proto=https;for=x", "X-Forwarded-Host": "api.example.com"]
        #expect(
            ClientOrigin.forwarded(headers: headers, direct: direct)
                == ClientOrigin(scheme: "http", host: "api.example.com", address: "10.0.0.5"))
        let junk: Headers = [
            "X-Forwarded-For": "not-an-address, 192.0.2.1", "X-Forwarded-Proto": "gopher",
            "X-Forwarded-Host": "evil.example/path", "Forwarded": "proto=ftp",
        ]
        #expect(ClientOrigin.forwarded(headers: junk, direct: direct) == direct)
    }

    @Test func aPipelineResolvesTheOriginOnlyWhenItTrustsItsProxy() async {
        var router = Router<Void>()
        router.get("/where") { request in
            .text("\(request.origin.scheme) \(request.origin.host ?? "-") \(request.origin.address ?? "-")")
        }
        let headers: Headers = ["Host": "internal", "Forwarded": "for=192.0.2.60;proto=https;host=api.example.com"]
        for (trusts, expected) in [(false, "http internal -"), (true, "https api.example.com 192.0.2.60")] {
            let log = LogCapture()
            let pipeline = RequestPipeline(
                router: router, context: (), observers: [AccessLog(logger: log.logger())], trustsProxy: trusts,
                logger: log.logger())
            let response = await pipeline.respond(to: Request(method: .get, target: "/where", headers: headers))
            #expect(String(decoding: response.body, as: UTF8.self) == expected)
            #expect(log.accessEvents.first?.metadata?["client"]?.description == (trusts ? "192.0.2.60" : nil))
        }
    }

    @Test func theAccessLogNamesTheSocketPeerUnlessAProxyIsTrusted() async throws {
        for trusts in [false, true] {
            let log = LogCapture()
            let pipeline = RequestPipeline(
                router: makeTestRouter(), context: (), observers: [AccessLog(logger: log.logger())], trustsProxy: trusts,
                logger: log.logger())
            try await withTestServer(handler: pipeline, log: log) { port, _ in
                let response = try await runOffCooperativePool {
                    try TestClient(port: port).request("GET", "/hello", headers: [("X-Forwarded-For", "198.51.100.23")])
                }
                #expect(response.status == 200)
                try await waitUntil("the access line is logged") { !log.accessEvents.isEmpty }
                #expect(log.accessEvents.first?.metadata?["client"]?.description == (trusts ? "198.51.100.23" : "127.0.0.1"))
            }
        }
    }
}
