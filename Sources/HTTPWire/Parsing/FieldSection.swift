/// Reads the field lines of a head or a chunked trailer section (RFC 9112 §5).
package struct FieldSection {
    package let bytes: UnsafeRawBufferPointer

    /// Scans lines from `start` to the empty line that ends the section, within `maxBytes` and `maxCount` lines.
    ///
    /// Returns the content ranges of the field lines; `consumed` is the index just past the empty line.
    package func scan(from start: Int, maxBytes: Int, maxCount: Int) -> ParseResult<[Range<Int>]> {
        let scanner = LineScanner(bytes: bytes)
        let limit = start + maxBytes
        var lines: [Range<Int>] = []
        var position = start
        while true {
            switch scanner.line(from: position, limit: limit) {
            case .line(let content, let next):
                if content.isEmpty { return .complete(lines, consumed: next) }
                // Many tiny fields fit in the byte limit yet cost a String pair each; the count bounds that.
                guard lines.count < maxCount else {
                    return .invalid(
                        Problem(
                            .requestHeaderFieldsTooLarge, detail: "The header section has more than \(maxCount) fields."
                        ))
                }
                lines.append(content)
                position = next
            case .notFound(let searchedTo):
                if searchedTo >= limit {
                    return .invalid(
                        Problem(
                            .requestHeaderFieldsTooLarge, detail: "The header section exceeds \(maxBytes) bytes."
                        ))
                }
                return .incomplete
            case .invalid(let problem):
                return .invalid(problem)
            }
        }
    }

    /// Splits one field line into name and value, or says what is wrong with it.
    package func field(_ line: Range<Int>) -> Result<(name: String, value: String), Problem> {
        let first = bytes[line.lowerBound]
        // RFC 9112 §5.2: obs-fold (a line starting with whitespace) is rejected with 400.
        if first == ASCII.space || first == ASCII.tab {
            return .failure(.malformed("Folded header lines (obs-fold) are not accepted (RFC 9112 §5.2)."))
        }
        guard let colon = line.first(where: { bytes[$0] == ASCII.colon }) else {
            return .failure(.malformed("A header line has no colon."))
        }
        let nameRange = line.lowerBound..<colon
        guard !nameRange.isEmpty else { return .failure(.malformed("A header line has an empty name.")) }
        if bytes[colon - 1] == ASCII.space || bytes[colon - 1] == ASCII.tab {
            // RFC 9112 §5.1: whitespace between field name and colon must be rejected with 400.
            return .failure(.malformed("Whitespace between a header name and its colon is not allowed (RFC 9112 §5.1)."))
        }
        guard nameRange.allSatisfy({ ASCII.isTokenCharacter(bytes[$0]) }) else {
            return .failure(.malformed("A header name contains a character that is not a token character."))
        }
        var valueStart = colon + 1
        var valueEnd = line.upperBound
        while valueStart < valueEnd, bytes[valueStart] == ASCII.space || bytes[valueStart] == ASCII.tab { valueStart += 1 }
        while valueEnd > valueStart, bytes[valueEnd - 1] == ASCII.space || bytes[valueEnd - 1] == ASCII.tab { valueEnd -= 1 }
        let valueRange = valueStart..<valueEnd
        // RFC 9110 §5.5: NUL and other control characters in a value are invalid.
        guard valueRange.allSatisfy({ ASCII.isFieldValueCharacter(bytes[$0]) }) else {
            return .failure(.malformed("A header value contains a control character."))
        }
        return .success((name: string(nameRange), value: string(valueRange)))
    }

    private func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
