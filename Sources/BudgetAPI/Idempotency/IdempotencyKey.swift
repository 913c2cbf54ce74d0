import BudgetCore
import HTTPServer

/// A client's `Idempotency-Key` (docs/sync.md): the header's value as the IETF draft writes it (a quoted
/// structured-field string) or bare, unquoted and checked.
struct IdempotencyKey: Sendable, Hashable, CustomStringConvertible {
    static let headerName = "Idempotency-Key"
    static let maximumLength = 255

    let value: String

    var description: String { value }

    /// The key of `request`, nil when it sent none; 400 when it is malformed or sent twice, or when the client
    /// percent-encoded it (`%22k-1%22` would otherwise be a bare key other than the quoted `"k-1"`).
    static func from(_ request: Request) throws -> IdempotencyKey? {
        let values = request.headers.values(for: headerName)
        guard let first = values.first else { return nil }
        guard values.count == 1 else { throw IdempotencyError.malformedKey("send one \(headerName) header, not \(values.count)") }
        if PercentEncodedHeader.startsWithEncodedQuote(first) {
            throw PercentEncodedHeader.problem(header: headerName, advice: BudgetApp.percentEncodingAdvice)
        }
        return try IdempotencyKey(parsing: first)
    }

    /// Parses `"abc"` (with `\"` and `\\` escapes) or a bare run of visible ASCII characters.
    init(parsing text: String) throws {
        var key = ""
        if text.hasPrefix("\"") {
            guard text.count >= 2, text.hasSuffix("\"") else { throw IdempotencyError.malformedKey("the quoted key has no closing quote") }
            var isEscaped = false
            for scalar in text.unicodeScalars.dropFirst().dropLast() {
                guard (0x20...0x7E).contains(scalar.value) else {
                    throw IdempotencyError.malformedKey("a key may hold printable ASCII characters only")
                }
                if isEscaped {
                    guard scalar == "\"" || scalar == "\\" else {
                        throw IdempotencyError.malformedKey("only \\\" and \\\\ may be escaped in a quoted key")
                    }
                    key.unicodeScalars.append(scalar)
                    isEscaped = false
                } else if scalar == "\\" {
                    isEscaped = true
                } else {
                    guard scalar != "\"" else { throw IdempotencyError.malformedKey("a quote inside a quoted key must be escaped") }
                    key.unicodeScalars.append(scalar)
                }
            }
            guard !isEscaped else { throw IdempotencyError.malformedKey("the quoted key ends inside an escape") }
        } else {
            guard text.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
                throw IdempotencyError.malformedKey("a bare key may hold visible ASCII characters only (quote it to use spaces)")
            }
            key = text
        }
        try self.init(key)
    }

    /// A key already unquoted, as a batch operation's `idempotencyKey` gives it: printable ASCII only, like
    /// a header's, so the same key means the same thing in both places (and a NUL never reaches PostgreSQL).
    init(_ value: String) throws {
        guard !value.isEmpty else { throw IdempotencyError.malformedKey("the key is empty") }
        guard value.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) else {
            throw IdempotencyError.malformedKey("a key may hold printable ASCII characters only")
        }
        guard value.utf8.count <= Self.maximumLength else {
            throw IdempotencyError.malformedKey("the key has \(value.utf8.count) characters; at most \(Self.maximumLength) are allowed")
        }
        self.value = value
    }
}

/// What a retry must repeat exactly for its key to replay: method, target, media type and body.
///
/// A JSON body counts in its compact form, so a retry that differs only in whitespace still matches;
/// numbers keep their text and members their order, as the server stores them.
struct RequestFingerprint: Sendable {
    let method: String
    let target: String
    /// The text PostgreSQL hashes with SHA-256 (see IdempotencyQueries).
    let canonicalText: String

    init(method: Method, target: String, contentType: String?, body: [UInt8]) {
        self.method = method.rawValue
        self.target = target
        let canonicalBody = (try? JSONParser.parse(body)).map(JSONWriter.string) ?? String(decoding: body, as: UTF8.self)
        canonicalText = "\(method.rawValue) \(target)\n\(contentType ?? "")\n\(canonicalBody)"
    }

    init(_ request: Request) {
        self.init(method: request.method, target: request.target, contentType: request.contentType, body: request.body)
    }
}
