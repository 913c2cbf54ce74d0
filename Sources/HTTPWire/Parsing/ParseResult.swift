/// The three outcomes of a pure parse over the bytes received so far (picohttpparser's shape).
package enum ParseResult<Value> {
    /// A whole element, and how many bytes of the input it used.
    case complete(Value, consumed: Int)
    /// Valid so far; wait for more bytes and parse again from the same start.
    case incomplete
    /// A framing fault: the connection answers `Problem` and closes.
    case invalid(Problem)
}

/// What a parsed request head says about the request and how its body is framed.
package struct RequestHead: Sendable {
    package var method: Method
    package var target: String
    package var components: RequestTarget
    package var isHTTP10: Bool
    package var headers: Headers
    package var framing: BodyFraming
    /// `Expect: 100-continue` from an HTTP/1.1 client (RFC 9110 §10.1.1; HTTP/1.0 ones are ignored).
    package var expectsContinue: Bool
}

/// How the body after the head is delimited (RFC 9112 §6.3).
package enum BodyFraming: Equatable, Sendable {
    case none
    case length(Int)
    case chunked
}

extension Problem {
    /// A 400 for a framing fault, with a detail a client developer can act on.
    package static func malformed(_ detail: String) -> Problem {
        Problem(.badRequest, detail: detail)
    }

    /// A 413 for a body over the request's limit.
    package static func bodyTooLarge(_ limit: Int) -> Problem {
        Problem(.payloadTooLarge, detail: "The body exceeds \(limit) bytes.")
    }
}

/// Byte constants and classes from RFC 9110 §5.6.2 and RFC 5234 appendix B.
///
/// The constants are inlinable computed properties, not stored `let`s: another module reads a stored global
/// through an accessor call, which the response serializer made twice for every byte of every header value.
package enum ASCII {
    @inlinable package static var cr: UInt8 { UInt8(ascii: "\r") }
    @inlinable package static var lf: UInt8 { UInt8(ascii: "\n") }
    @inlinable package static var space: UInt8 { UInt8(ascii: " ") }
    @inlinable package static var tab: UInt8 { UInt8(ascii: "\t") }
    @inlinable package static var colon: UInt8 { UInt8(ascii: ":") }

    /// `tchar`: the characters allowed in a token such as a method or a field name.
    package static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// `field-vchar` plus SP and HTAB: what a field value may hold (obs-text included).
    package static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == tab || byte >= 0x20 && byte != 0x7F
    }
}
