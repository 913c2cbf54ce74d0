/// The three outcomes of a pure parse over the bytes received so far (picohttpparser's shape).
enum ParseResult<Value> {
    /// A whole element, and how many bytes of the input it used.
    case complete(Value, consumed: Int)
    /// Valid so far; wait for more bytes and parse again from the same start.
    case incomplete
    /// A framing fault: the connection answers `Problem` and closes.
    case invalid(Problem)
}

/// What a parsed request head says about the request and how its body is framed.
struct RequestHead: Sendable {
    var method: Method
    var target: String
    var components: RequestTarget
    var isHTTP10: Bool
    var headers: Headers
    var framing: BodyFraming
    /// `Expect: 100-continue` from an HTTP/1.1 client (RFC 9110 §10.1.1; HTTP/1.0 ones are ignored).
    var expectsContinue: Bool
}

/// How the body after the head is delimited (RFC 9112 §6.3).
enum BodyFraming: Equatable, Sendable {
    case none
    case length(Int)
    case chunked
}

extension Problem {
    /// A 400 for a framing fault, with a detail a client developer can act on.
    static func malformed(_ detail: String) -> Problem {
        Problem(.badRequest, detail: detail)
    }

    /// A 413 for a body over the request's limit.
    static func bodyTooLarge(_ limit: Int) -> Problem {
        Problem(.payloadTooLarge, detail: "The body exceeds \(limit) bytes.")
    }
}

/// Byte constants and classes from RFC 9110 §5.6.2 and RFC 5234 appendix B.
enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")

    /// `tchar`: the characters allowed in a token such as a method or a field name.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// `field-vchar` plus SP and HTAB: what a field value may hold (obs-text included).
    static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == tab || byte >= 0x20 && byte != 0x7F
    }
}
