@testable import HTTPServer
import Testing

func decodeChunked(_ raw: String, limits: Limits = Limits()) -> ParseResult<[UInt8]> {
    Array(raw.utf8).withUnsafeBytes { ChunkedDecoder(limits: limits).decode($0, maxBodyBytes: limits.maxBodyBytes) }
}

@Suite struct ChunkedDecoderTests {
    static let valid: [(String, String)] = [
        ("0\r\n\r\n", ""),
        ("5\r\nhello\r\n0\r\n\r\n", "hello"),
        ("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world"),
        ("A;name=value\r\n0123456789\r\n0\r\n\r\n", "0123456789"),  // chunk extension
        ("a ;ext\r\n0123456789\r\n0;last\r\n\r\n", "0123456789"),  // BWS before extension, lower-case hex
        ("3\r\nabc\r\n0\r\nTrailer-One: 1\r\nTrailer-Two: 2\r\n\r\n", "abc"),  // trailers
    ]

    @Test(arguments: valid)
    func decodesAndEveryTruncationIsIncomplete(raw: String, body: String) throws {
        let bytes = Array(raw.utf8)
        for length in 0..<bytes.count {
            let prefix = String(decoding: bytes[..<length], as: UTF8.self)
            #expect(decodeChunked(prefix).isIncomplete, "prefix \(prefix.debugDescription)")
        }
        let (decoded, consumed) = try #require(decodeChunked(raw).completed)
        #expect(String(decoding: decoded, as: UTF8.self) == body)
        #expect(consumed == bytes.count)
    }

    @Test func leavesTheNextPipelinedRequestAlone() throws {
        let raw = "3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n"
        let (_, consumed) = try #require(decodeChunked(raw).completed)
        #expect(consumed == raw.utf8.count - "GET / HTTP/1.1\r\n".utf8.count)
    }

    static let malformed: [(String, Int)] = [
        ("x\r\n", 400),  // not hex
        ("\r\n", 400),  // empty size
        ("5\nhello\r\n0\r\n\r\n", 400),  // bare LF after size
        ("5\r\nhelloXY0\r\n\r\n", 400),  // data not followed by CRLF
        ("5 x\r\nhello\r\n0\r\n\r\n", 400),  // junk after size
        ("5;a\u{1}\r\nhello\r\n0\r\n\r\n", 400),  // control in extension
        ("0\r\nTrailer : x\r\n\r\n", 400),  // whitespace before colon in trailer
        ("0\r\n folded\r\n\r\n", 400),  // obs-fold in trailers
        ("0\r\nX: y\n\r\n", 400),  // bare LF in trailers
        ("FFFFFFFFFFFFFFFFFF\r\n", 413),  // size overflows
        ("100001\r\n", 413),  // one chunk over 1 MiB
    ]

    @Test(arguments: malformed)
    func malformedChunkingIsRejected(raw: String, status: Int) {
        #expect(decodeChunked(raw).invalidStatus == status, "\(raw.debugDescription)")
    }

    @Test func sumOfChunksOverTheLimitIs413() {
        let limits = Limits(maxBodyBytes: 8)
        #expect(decodeChunked("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", limits: limits).invalidStatus == 413)
        #expect(decodeChunked("4\r\nhell\r\n4\r\no wo\r\n0\r\n\r\n", limits: limits).completed != nil)
    }

    @Test func overlongChunkLineIs400() {
        #expect(decodeChunked("5;" + String(repeating: "e", count: 5000)).invalidStatus == 400)
    }
}
