/// Decodes a chunked request body (RFC 9112 §7.1); a pure function of bytes and limits.
///
/// Input starts right after the head. Chunk extensions are skipped (their bytes must still be
/// visible characters); trailer fields are checked like header fields and then dropped, which
/// RFC 9112 §7.1.2 allows. Line ends are strict CRLF, as in the head.
package struct ChunkedDecoder {
    package let limits: Limits

    package init(limits: Limits) { self.limits = limits }

    /// Longest chunk-size line accepted, extensions included.
    package static let maxChunkLineBytes = 4096

    /// - Parameter maxBodyBytes: the request's limit (`Limits.maxBodyBytes(forPath:)`).
    package func decode(_ bytes: UnsafeRawBufferPointer, maxBodyBytes: Int) -> ParseResult<[UInt8]> {
        let scanner = LineScanner(bytes: bytes)
        var body: [UInt8] = []
        var position = 0
        while true {
            let lineLimit = position + Self.maxChunkLineBytes
            let sizeLine: Range<Int>
            switch scanner.line(from: position, limit: lineLimit) {
            case .line(let content, let next):
                (sizeLine, position) = (content, next)
            case .notFound(let searchedTo):
                return searchedTo >= lineLimit ? .invalid(.malformed("A chunk-size line is too long.")) : .incomplete
            case .invalid(let problem):
                return .invalid(problem)
            }
            let size: Int
            switch chunkSize(bytes, sizeLine) {
            case .success(let value): size = value
            case .failure(let problem): return .invalid(problem)
            }
            if size == 0 {
                return trailers(bytes, from: position, body: body)
            }
            guard size <= maxBodyBytes - body.count else { return .invalid(.bodyTooLarge(maxBodyBytes)) }
            guard bytes.count >= position + size + 2 else { return .incomplete }
            guard bytes[position + size] == ASCII.cr, bytes[position + size + 1] == ASCII.lf else {
                return .invalid(.malformed("Chunk data must be followed by CRLF."))
            }
            body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + size)]))
            position += size + 2
        }
    }

    /// `chunk-size [ chunk-ext ]`: hex digits, then nothing or `;` extensions (with optional BWS before it).
    private func chunkSize(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> Result<Int, Problem> {
        var index = line.lowerBound
        var size = 0
        while index < line.upperBound, let digit = hexValue(bytes[index]) {
            // More than 15 hex digits would overflow; no allowed body gets near that.
            guard index - line.lowerBound < 15 else { return .failure(.bodyTooLarge(limits.maxBodyBytes)) }
            size = size << 4 | Int(digit)
            index += 1
        }
        guard index > line.lowerBound else { return .failure(.malformed("A chunk does not start with a hex size.")) }
        while index < line.upperBound, bytes[index] == ASCII.space || bytes[index] == ASCII.tab { index += 1 }
        if index < line.upperBound {
            guard bytes[index] == UInt8(ascii: ";"),
                (index..<line.upperBound).allSatisfy({ ASCII.isFieldValueCharacter(bytes[$0]) })
            else {
                return .failure(.malformed("A chunk size is followed by something other than an extension."))
            }
        }
        return .success(size)
    }

    /// RFC 9112 §7.1.2: the trailer section is field lines up to an empty line.
    private func trailers(_ bytes: UnsafeRawBufferPointer, from start: Int, body: [UInt8]) -> ParseResult<[UInt8]> {
        let fields = FieldSection(bytes: bytes)
        switch fields.scan(from: start, maxBytes: limits.maxHeaderBytes, maxCount: limits.maxHeaderCount) {
        case .incomplete:
            return .incomplete
        case .invalid(let problem):
            return .invalid(problem)
        case .complete(let lines, let consumed):
            for line in lines {
                if case .failure(let problem) = fields.field(line) { return .invalid(problem) }
            }
            return .complete(body, consumed: consumed)
        }
    }
}
