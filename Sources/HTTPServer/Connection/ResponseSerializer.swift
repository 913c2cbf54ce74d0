/// Turns a response into the exact bytes of one HTTP/1.1 message, head and body in one buffer,
/// so the connection answers with a single write.
enum ResponseSerializer {
    /// Whether the connection owns the header `name`, so that a handler's own value for it is replaced:
    /// `Content-Length`, `Connection`, `Transfer-Encoding`, `X-Request-Id`, `X-Content-Type-Options`, `Date`.
    /// Chosen by length first: every answer asks this for each of its fields.
    private static func isConnectionOwned(_ name: String) -> Bool {
        switch name.utf8.count {
        case 4: name.equalsIgnoringASCIICase("Date")
        case 10: name.equalsIgnoringASCIICase("Connection")
        case 12: name.equalsIgnoringASCIICase("X-Request-Id")
        case 14: name.equalsIgnoringASCIICase("Content-Length")
        case 17: name.equalsIgnoringASCIICase("Transfer-Encoding")
        case 22: name.equalsIgnoringASCIICase("X-Content-Type-Options")
        default: false
        }
    }

    static func serialize(_ response: Response, requestID: String, isHead: Bool, keepAlive: Bool, isHTTP10: Bool) -> [UInt8] {
        let sendsBody = !isHead && !response.status.forbidsContent
        var bytes: [UInt8] = []
        bytes.reserveCapacity(200 + response.headers.count * 48 + (sendsBody ? response.body.count : 0))
        appendHead(of: response, framing: .length(response.body.count), requestID: requestID, keepAlive: keepAlive, isHTTP10: isHTTP10, to: &bytes)
        if sendsBody { bytes.append(contentsOf: response.body) }
        return bytes
    }

    /// The head of an answer whose body is streamed (`Response.stream`), followed by `body`, its first part:
    /// chunked for HTTP/1.1 (RFC 9112 §7.1); for HTTP/1.0, which knows no chunks, delimited by closing the
    /// connection (RFC 9112 §6.3), so `keepAlive` must then be false. A `HEAD` gets the head a `GET` would.
    static func serializeStreamHead(_ response: Response, requestID: String, isHead: Bool, keepAlive: Bool, isHTTP10: Bool) -> [UInt8] {
        precondition(!isHTTP10 || !keepAlive, "a streamed answer to HTTP/1.0 ends by closing the connection")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(220 + response.headers.count * 48 + (isHead ? 0 : response.body.count + 12))
        appendHead(
            of: response, framing: isHTTP10 ? .closeDelimited : .chunked, requestID: requestID, keepAlive: keepAlive, isHTTP10: isHTTP10, to: &bytes)
        if !isHead { appendBodyPart(response.body, isChunked: !isHTTP10, to: &bytes) }
        return bytes
    }

    /// How a head says where its body ends (RFC 9112 §6.3).
    private enum Framing {
        case length(Int)
        case chunked
        /// Neither header: the body ends when the connection closes.
        case closeDelimited
    }

    private static func appendHead(
        of response: Response, framing: Framing, requestID: String, keepAlive: Bool, isHTTP10: Bool, to bytes: inout [UInt8]
    ) {
        // Written piece by piece: building each line as an interpolated String first cost an allocation per line.
        append("HTTP/1.1 ", to: &bytes)
        append(decimal: response.status.code, to: &bytes)
        append(" ", to: &bytes)
        append(response.status.reason, to: &bytes)
        append("\r\n", to: &bytes)
        for (name, value) in response.headers where !isConnectionOwned(name) {
            // A CR or LF in a handler's header would let it forge headers (response splitting); drop it.
            guard !containsLineBreak(name), !containsLineBreak(value) else { continue }
            appendField(name, value, to: &bytes)
        }
        // RFC 9110 §8.6: HEAD answers carry the Content-Length the GET would have; 204/304/1xx carry none.
        if !response.status.forbidsContent {
            switch framing {
            case .length(let length):
                append("Content-Length: ", to: &bytes)
                append(decimal: length, to: &bytes)
                append("\r\n", to: &bytes)
            case .chunked:
                append("Transfer-Encoding: chunked\r\n", to: &bytes)
            case .closeDelimited:
                break
            }
        }
        if !keepAlive {
            append("Connection: close\r\n", to: &bytes)
        } else if isHTTP10 {
            // RFC 9112 §9.3: an HTTP/1.0 client persists only when told so.
            append("Connection: keep-alive\r\n", to: &bytes)
        }
        appendField("Date", HTTPDate.now(), to: &bytes)
        // docs/operations.md, Limits: no browser may guess a type other than the one declared, on any answer.
        append("X-Content-Type-Options: nosniff\r\n", to: &bytes)
        appendField("X-Request-Id", requestID, to: &bytes)
        append("\r\n", to: &bytes)
    }

    /// One part of a streamed body: a chunk (RFC 9112 §7.1, `chunk-size CRLF chunk-data CRLF`, the size in
    /// hexadecimal), or the bytes as they are when the body is delimited by closing. Nothing for no bytes:
    /// an empty chunk would be the last one.
    static func appendBodyPart(_ part: [UInt8], isChunked: Bool, to bytes: inout [UInt8]) {
        guard !part.isEmpty else { return }
        guard isChunked else { return bytes.append(contentsOf: part) }
        append(hexadecimal: part.count, to: &bytes)
        append("\r\n", to: &bytes)
        bytes.append(contentsOf: part)
        append("\r\n", to: &bytes)
    }

    /// The last chunk with no trailer section, which completes a chunked body (RFC 9112 §7.1).
    static let lastChunk = Array("0\r\n\r\n".utf8)

    /// The interim answer to `Expect: 100-continue` (RFC 9110 §10.1.1).
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Copies `text`'s UTF-8 with one memcpy: appending `text.utf8` went through the generic sequence path.
    private static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private static func appendField(_ name: String, _ value: String, to bytes: inout [UInt8]) {
        append(name, to: &bytes)
        append(": ", to: &bytes)
        append(value, to: &bytes)
        append("\r\n", to: &bytes)
    }

    /// A non-negative integer in decimal, without making a String of it.
    private static func append(decimal value: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// A positive integer in hexadecimal, lowercase, without leading zeros.
    private static func append(hexadecimal value: Int, to bytes: inout [UInt8]) {
        var shift = (Int.bitWidth - value.leadingZeroBitCount - 1) / 4 * 4
        while shift >= 0 {
            bytes.append(hexDigits[(value >> shift) & 0xF])
            shift -= 4
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Whether `text` holds a CR or LF, scanned in its contiguous UTF-8.
    private static func containsLineBreak(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { $0.contains { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") } }
    }
}
