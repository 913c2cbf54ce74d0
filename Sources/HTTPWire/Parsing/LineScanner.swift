#if canImport(Glibc)
    import Glibc
#endif

/// Finds CRLF-terminated lines in received bytes, strictly.
///
/// RFC 9112 §2.2 lets a recipient accept a bare LF as a line end; this server does not: a bare
/// LF (or a CR not followed by LF) in the head is a 400. Accepting what other parsers in front of
/// us might read differently is how request smuggling starts, and every real client sends CRLF.
package struct LineScanner {
    package let bytes: UnsafeRawBufferPointer

    package enum Line {
        /// The line's content without CRLF, and the index just past its LF.
        case line(Range<Int>, next: Int)
        /// No line end within `limit`; the caller decides whether that is "wait" or "too long".
        case notFound(searchedTo: Int)
        case invalid(Problem)
    }

    /// The line starting at `start`, looking for its LF no further than index `limit` (exclusive).
    package func line(from start: Int, limit: Int) -> Line {
        let end = min(limit, bytes.count)
        guard start < end, let base = bytes.baseAddress else { return .notFound(searchedTo: end) }
        guard let found = memchr(base + start, Int32(ASCII.lf), end - start) else {
            return .notFound(searchedTo: end)
        }
        let lf = base.distance(to: UnsafeRawPointer(found))
        guard lf > start, bytes[lf - 1] == ASCII.cr else {
            return .invalid(.malformed("Lines must end with CRLF; found a bare LF (RFC 9112 §2.2)."))
        }
        let content = start..<(lf - 1)
        // RFC 9112 §2.2: a bare CR inside a line is invalid.
        if let cr = memchr(base + start, Int32(ASCII.cr), content.count), base.distance(to: UnsafeRawPointer(cr)) < lf - 1 {
            return .invalid(.malformed("A bare CR is not allowed in the request head (RFC 9112 §2.2)."))
        }
        return .line(content, next: lf + 1)
    }
}
