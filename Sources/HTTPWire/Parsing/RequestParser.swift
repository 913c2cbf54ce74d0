/// Parses a request head from the bytes received so far; a pure function of bytes and limits.
///
/// The caller owns the buffer and calls again with more bytes after `.incomplete`; the parser
/// never reads a socket and keeps no state. The head ends at the first empty line; the body, if
/// any, is framed by `RequestHead.framing` and read by the caller (`ChunkedDecoder` for chunked).
package struct RequestParser {
    package let limits: Limits

    package init(limits: Limits) { self.limits = limits }

    package func parseHead(_ bytes: UnsafeRawBufferPointer) -> ParseResult<RequestHead> {
        var start = 0
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
        if bytes.count >= 2, bytes[0] == ASCII.cr, bytes[1] == ASCII.lf { start = 2 }
        let lineLimit = start + limits.maxRequestLineBytes + 2
        let requestLine: Range<Int>
        let headerStart: Int
        switch LineScanner(bytes: bytes).line(from: start, limit: lineLimit) {
        case .line(let content, let next):
            (requestLine, headerStart) = (content, next)
        case .notFound(let searchedTo):
            return searchedTo >= lineLimit ? .invalid(uriTooLong) : .incomplete
        case .invalid(let problem):
            return .invalid(problem)
        }
        if requestLine.count > limits.maxRequestLineBytes { return .invalid(uriTooLong) }
        let fields = FieldSection(bytes: bytes)
        switch fields.scan(from: headerStart, maxBytes: limits.maxHeaderBytes, maxCount: limits.maxHeaderCount) {
        case .incomplete:
            return .incomplete
        case .invalid(let problem):
            return .invalid(problem)
        case .complete(let lines, let consumed):
            do throws(Problem) {
                var head = try parseRequestLine(bytes, requestLine)
                for line in lines {
                    let field = try fields.field(line).get()
                    head.headers.add(field.name, field.value)
                }
                try applyFieldSemantics(to: &head)
                return .complete(head, consumed: consumed)
            } catch {
                return .invalid(error)
            }
        }
    }

    private var uriTooLong: Problem {
        Problem(.uriTooLong, detail: "The request line exceeds \(limits.maxRequestLineBytes) bytes.")
    }

    /// RFC 9112 §3: `method SP request-target SP HTTP-version`, single spaces, nothing else.
    ///
    /// Read in place, without an array of parts or a String per part before it is needed: this runs for
    /// every request.
    private func parseRequestLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) throws(Problem) -> RequestHead {
        var spaces = 0
        var firstSpace = line.lowerBound
        var secondSpace = line.lowerBound
        for index in line where bytes[index] == ASCII.space {
            spaces += 1
            if spaces == 1 { firstSpace = index } else if spaces == 2 { secondSpace = index }
        }
        // Exactly two spaces with something before, between and after them: three non-empty parts.
        guard spaces == 2, firstSpace > line.lowerBound, secondSpace > firstSpace + 1, secondSpace + 1 < line.upperBound else {
            throw .malformed("The request line must be 'METHOD target HTTP/1.1'.")
        }
        let (methodRange, targetRange) = (line.lowerBound..<firstSpace, (firstSpace + 1)..<secondSpace)
        let text = { (range: Range<Int>) in String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        guard methodRange.allSatisfy({ ASCII.isTokenCharacter(bytes[$0]) }) else {
            throw .malformed("The method is not a token.")
        }
        guard targetRange.allSatisfy({ (0x21...0x7E).contains(bytes[$0]) }) else {
            throw .malformed("The request target contains a character that is not visible ASCII.")
        }
        let method = Method(rawValue: text(methodRange))
        let target = text(targetRange)
        let isHTTP10 = try httpVersionIs10(UnsafeRawBufferPointer(rebasing: bytes[(secondSpace + 1)..<line.upperBound]))
        // RFC 9112 §3.2: origin-form, absolute-form, or asterisk-form for OPTIONS only.
        guard
            target.hasPrefix("/") || target.hasPrefix("http://") || target.hasPrefix("https://")
                || (target == "*" && method == .options)
        else {
            throw .malformed("The request target must be a path such as '/items'.")
        }
        guard let components = RequestTarget(target) else {
            throw .malformed("The request target has an invalid percent-encoding.")
        }
        return RequestHead(
            method: method, target: target, components: components, isHTTP10: isHTTP10,
            headers: Headers(), framing: .none, expectsContinue: false
        )
    }

    /// True for HTTP/1.0, false for HTTP/1.1 (or a later 1.x, RFC 9110 §2.5); 505 for other majors.
    private func httpVersionIs10(_ version: UnsafeRawBufferPointer) throws(Problem) -> Bool {
        guard version.count == 8, version.starts(with: "HTTP/".utf8), version[6] == UInt8(ascii: "."),
            let major = hexValue(version[5]), major < 10, let minor = hexValue(version[7]), minor < 10
        else {
            throw .malformed("The HTTP version is malformed.")
        }
        guard major == 1 else {
            throw Problem(.httpVersionNotSupported, detail: "Only HTTP/1.0 and HTTP/1.1 are served.")
        }
        return minor == 0
    }
}
