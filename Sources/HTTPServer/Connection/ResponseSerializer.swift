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
        let date = HTTPDate.now()
        let capacity = headCapacity(of: response, requestID: requestID, date: date) + (sendsBody ? response.body.count : 0)
        return ByteWriter.bytes(capacity: capacity) { writer in
            writeHead(
                of: response, framing: .length(response.body.count), requestID: requestID, date: date, keepAlive: keepAlive,
                isHTTP10: isHTTP10, to: &writer)
            if sendsBody { writer.write(response.body) }
        }
    }

    /// The head of an answer whose body is streamed (`Response.stream`), followed by `body`, its first part:
    /// chunked for HTTP/1.1 (RFC 9112 §7.1); for HTTP/1.0, which knows no chunks, delimited by closing the
    /// connection (RFC 9112 §6.3), so `keepAlive` must then be false. A `HEAD` gets the head a `GET` would.
    static func serializeStreamHead(_ response: Response, requestID: String, isHead: Bool, keepAlive: Bool, isHTTP10: Bool) -> [UInt8] {
        precondition(!isHTTP10 || !keepAlive, "a streamed answer to HTTP/1.0 ends by closing the connection")
        let date = HTTPDate.now()
        // A chunk's frame: at most 16 hexadecimal digits and two CRLFs.
        let capacity = headCapacity(of: response, requestID: requestID, date: date) + (isHead ? 0 : response.body.count + 20)
        return ByteWriter.bytes(capacity: capacity) { writer in
            writeHead(
                of: response, framing: isHTTP10 ? .closeDelimited : .chunked, requestID: requestID, date: date, keepAlive: keepAlive,
                isHTTP10: isHTTP10, to: &writer)
            guard !isHead, !response.body.isEmpty else { return }
            if isHTTP10 { return writer.write(response.body) }
            writer.write(hexadecimal: response.body.count)
            writer.write("\r\n")
            writer.write(response.body)
            writer.write("\r\n")
        }
    }

    /// How a head says where its body ends (RFC 9112 §6.3).
    private enum Framing {
        case length(Int)
        case chunked
        /// Neither header: the body ends when the connection closes.
        case closeDelimited
    }

    /// The most bytes `writeHead` writes for `response`: its own fields and the texts given, plus 256 for the
    /// rest (the status line's code and CRLF, the framing, `Connection`, and the fixed parts of `Date`,
    /// `X-Content-Type-Options` and `X-Request-Id` take at most 155).
    private static func headCapacity(of response: Response, requestID: String, date: String) -> Int {
        var capacity = 256 + response.status.reason.utf8.count + requestID.utf8.count + date.utf8.count
        for (name, value) in response.headers { capacity += name.utf8.count + value.utf8.count + 4 }
        return capacity
    }

    /// Writes the head straight into the answer's buffer, sized beforehand (`headCapacity`): appending each
    /// piece to an Array checked its capacity and uniqueness every time, some forty times per answer.
    private static func writeHead(
        of response: Response, framing: Framing, requestID: String, date: String, keepAlive: Bool, isHTTP10: Bool,
        to writer: inout ByteWriter
    ) {
        writer.write("HTTP/1.1 ")
        writer.write(decimal: response.status.code)
        writer.write(" ")
        writer.write(text: response.status.reason)
        writer.write("\r\n")
        for (name, value) in response.headers where !isConnectionOwned(name) {
            // A CR or LF in a handler's header would let it forge headers (response splitting); drop it.
            let mark = writer.mark
            writer.write(text: name)
            writer.write(": ")
            writer.write(text: value)
            if writer.containsLineBreak(since: mark) {
                writer.rewind(to: mark)
                continue
            }
            writer.write("\r\n")
        }
        // RFC 9110 §8.6: HEAD answers carry the Content-Length the GET would have; 204/304/1xx carry none.
        if !response.status.forbidsContent {
            switch framing {
            case .length(let length):
                writer.write("Content-Length: ")
                writer.write(decimal: length)
                writer.write("\r\n")
            case .chunked:
                writer.write("Transfer-Encoding: chunked\r\n")
            case .closeDelimited:
                break
            }
        }
        if !keepAlive {
            writer.write("Connection: close\r\n")
        } else if isHTTP10 {
            // RFC 9112 §9.3: an HTTP/1.0 client persists only when told so.
            writer.write("Connection: keep-alive\r\n")
        }
        writer.write("Date: ")
        writer.write(text: date)
        // docs/operations.md, Limits: no browser may guess a type other than the one declared, on any answer.
        writer.write("\r\nX-Content-Type-Options: nosniff\r\nX-Request-Id: ")
        writer.write(text: requestID)
        writer.write("\r\n\r\n")
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

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
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
}
