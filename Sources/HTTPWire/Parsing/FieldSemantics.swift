extension RequestParser {
    /// Checks Host and decides body framing, rejecting every ambiguity a smuggler could use.
    package func applyFieldSemantics(to head: inout RequestHead) throws(Problem) {
        let hosts = head.headers.values(for: "Host")
        // RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, or any request with several.
        if hosts.count > 1 || (hosts.isEmpty && !head.isHTTP10) {
            throw .malformed("A request must carry exactly one Host header.")
        }
        // Lists are split only for fields present: most requests have neither.
        if head.headers.contains("Transfer-Encoding") {
            let codings = listItems(head.headers.values(for: "Transfer-Encoding"))
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
            if head.isHTTP10 { throw .malformed("Transfer-Encoding is not allowed in an HTTP/1.0 request.") }
            // RFC 9112 §6.3 item 3: both headers present is a smuggling attempt; reject, don't pick one.
            if head.headers.contains("Content-Length") {
                throw .malformed("A request must not carry both Content-Length and Transfer-Encoding (RFC 9112 §6.3).")
            }
            // Only chunked is understood; anything else leaves the body length unknowable (RFC 9112 §6.3).
            guard codings.map({ $0.lowercased() }) == ["chunked"] else {
                throw .malformed("The only transfer coding accepted is 'chunked'.")
            }
            head.framing = .chunked
        } else if head.headers.contains("Content-Length") {
            head.framing = .length(try contentLength(listItems(head.headers.values(for: "Content-Length"))))
        }
        let maxBodyBytes = limits.maxBodyBytes(forPath: head.components.path)
        if case .length(let length) = head.framing, length > maxBodyBytes {
            throw Problem.bodyTooLarge(maxBodyBytes)
        }
        if !head.isHTTP10, let expect = head.headers["Expect"], expect.lowercased() == "100-continue" {
            head.expectsContinue = head.framing != .none && head.framing != .length(0)
        }
    }

    /// RFC 9110 §8.6: digits only; repeated identical values may be folded, differing ones are an error.
    private func contentLength(_ values: [Substring]) throws(Problem) -> Int {
        guard let first = values.first, !first.isEmpty, values.allSatisfy({ $0 == first }) else {
            throw .malformed("Content-Length values disagree or are empty (RFC 9112 §6.3).")
        }
        guard first.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .malformed("Content-Length must be a decimal number.")
        }
        guard first.utf8.count <= 18, let length = Int(first) else {
            throw Problem.bodyTooLarge(limits.maxBodyBytes)
        }
        return length
    }

    /// The comma-separated items of a list-valued field across all its lines (RFC 9110 §5.6.1).
    private func listItems(_ values: [String]) -> [Substring] {
        values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }.map { $0.trimmingASCIIWhitespace() }
    }
}
