@testable import HTTPServer
import Testing

/// Parses `raw` with default limits (or `limits`).
func parseHead(_ raw: String, limits: Limits = Limits()) -> ParseResult<RequestHead> {
    Array(raw.utf8).withUnsafeBytes { RequestParser(limits: limits).parseHead($0) }
}

extension ParseResult {
    var invalidStatus: Int? {
        if case .invalid(let problem) = self { return problem.status.code }
        return nil
    }

    var isIncomplete: Bool {
        if case .incomplete = self { return true }
        return false
    }

    var completed: (Value, Int)? {
        if case .complete(let value, let consumed) = self { return (value, consumed) }
        return nil
    }
}

@Suite struct RequestParserTests {
    static let valid = [
        "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /items?x=1&y=a+b HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Type: application/json; charset=utf-8\r\n\r\n",
        "PUT /t HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n",
        "GET /old HTTP/1.0\r\n\r\n",
        "\r\nGET /after-empty-line HTTP/1.1\r\nHost: a\r\n\r\n",
    ]

    @Test(arguments: valid)
    func everyTruncationIsIncomplete(raw: String) {
        let bytes = Array(raw.utf8)
        for length in 0..<bytes.count {
            let prefix = String(decoding: bytes[..<length], as: UTF8.self)
            #expect(parseHead(prefix).isIncomplete, "prefix of \(length) bytes: \(prefix.debugDescription)")
        }
        let whole = parseHead(raw).completed
        #expect(whole?.1 == bytes.count)
    }

    @Test func completeHeadHasFieldsInOrder() throws {
        let raw = "POST /a%20b/c?q=x%26y&q=2&flag HTTP/1.1\r\nHost: a\r\nX-One: 1 \r\nx-one:  2\r\nContent-Length: 4\r\n\r\nbody"
        let (head, consumed) = try #require(parseHead(raw).completed)
        #expect(consumed == raw.utf8.count - 4)
        #expect(head.method == .post)
        #expect(head.target == "/a%20b/c?q=x%26y&q=2&flag")
        #expect(head.components.path == "/a b/c")
        #expect(head.components.query.map(\.name) == ["q", "q", "flag"])
        #expect(head.components.query.map(\.value) == ["x&y", "2", ""])
        #expect(head.headers.values(for: "X-ONE") == ["1", "2"])
        #expect(head.framing == .length(4))
        #expect(!head.isHTTP10)
    }

    @Test func framingAndExpectations() throws {
        let chunked = try #require(parseHead(Self.valid[2]).completed).0
        #expect(chunked.framing == .chunked)
        #expect(chunked.expectsContinue)
        let old = try #require(parseHead(Self.valid[3]).completed).0
        #expect(old.isHTTP10)
        #expect(old.framing == .none)
        let repeated = parseHead("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n")
        #expect(repeated.completed?.0.framing == .length(2))
    }

    static let malformed: [(String, Int)] = [
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // double space
        ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),  // trailing space
        ("GET /\r\nHost: a\r\n\r\n", 400),  // HTTP/0.9 style
        ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // method not a token
        ("GET /a\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // DEL in target
        ("GET noslash HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // bad percent-encoding
        ("GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTP/1.1\nHost: a\r\n\r\n", 400),  // bare LF after request line
        ("GET / HTTP/1.1\r\nHost: a\n\r\n", 400),  // bare LF after a field
        ("GET / HTTP/1.1\r\nHost: a\r\n\n", 400),  // bare LF as the empty line
        ("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),  // bare CR in a value
        ("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  folded\r\n\r\n", 400),  // obs-fold
        ("GET / HTTP/1.1\r\nHost: a\r\nX-Bad : 1\r\n\r\n", 400),  // whitespace before colon
        ("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", 400),  // NUL in a value
        ("GET / HTTP/1.1\r\n\r\n", 400),  // HTTP/1.1 without Host
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),  // two Hosts
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n", 400),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1048577\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413),
    ]

    @Test(arguments: malformed)
    func malformedHeadIsRejected(raw: String, status: Int) {
        #expect(parseHead(raw).invalidStatus == status, "\(raw.debugDescription)")
    }

    @Test func requestLineLimitGives414EvenBeforeTheLineEnds() {
        let limits = Limits(maxRequestLineBytes: 64)
        let long = "GET /" + String(repeating: "a", count: 100)
        #expect(parseHead(long, limits: limits).invalidStatus == 414)
        let exact = "GET /" + String(repeating: "a", count: 64 - 14) + " HTTP/1.1"
        #expect(exact.utf8.count == 64)
        #expect(parseHead(exact + "\r\nHost: a\r\n\r\n", limits: limits).completed != nil)
        #expect(parseHead("GET /" + String(repeating: "a", count: 64 - 13) + " HTTP/1.1\r\n", limits: limits).invalidStatus == 414)
    }

    @Test func headerLimitGives431EvenBeforeTheHeadEnds() {
        let limits = Limits(maxHeaderBytes: 100)
        let field = "X-Long: " + String(repeating: "v", count: 120)
        #expect(parseHead("GET / HTTP/1.1\r\nHost: a\r\n" + field, limits: limits).invalidStatus == 431)
        #expect(parseHead("GET / HTTP/1.1\r\nHost: a\r\n" + field + "\r\n\r\n", limits: limits).invalidStatus == 431)
        #expect(parseHead("GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n\r\n", limits: limits).completed != nil)
    }
}
