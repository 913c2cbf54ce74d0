/// A header value that a client percent-encoded as if it were part of a URL.
///
/// Header field values are not percent-encoded (RFC 9110 §5.5): `%22abc%22` is not the quoted `"abc"`. Some
/// generated clients encode them anyway, so an `If-Match` would be refused without saying why, and a quoted
/// `Idempotency-Key` would silently become a different bare key. A value that starts with `%22`, an encoded
/// double quote, is such a value: no entity tag and no key in its right form starts that way.
public enum PercentEncodedHeader {
    /// Whether `value` starts with `%22` (after optional whitespace; hex digits in either case).
    public static func startsWithEncodedQuote(_ value: some StringProtocol) -> Bool {
        let bytes = value.utf8.drop { $0 == ASCII.space || $0 == ASCII.tab }
        return bytes.starts(with: Array("%22".utf8))
    }

    /// The 400 for header `name`, naming the cause; `advice` (where the application documents a remedy) follows.
    public static func problem(header name: String, advice: String? = nil) -> Problem {
        let remedy = advice.map { " " + $0 } ?? ""
        return Problem(
            .badRequest,
            detail: "The \(name) header's value starts with %22, a percent-encoded double quote: the client "
                + "percent-encoded the header value, which HTTP does not do (RFC 9110 §5.5). Send it as the "
                + "server wrote it, quotes included.\(remedy)",
            errors: [.init(field: name, message: "percent-encoded (starts with %22)")])
    }
}
