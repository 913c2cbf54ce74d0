import JSONText

/// RFC 9457 problem details: an error that knows its own HTTP answer.
public struct Problem: Error, Sendable, CustomStringConvertible {
    /// One invalid input field, so a client can show every mistake at once.
    public struct FieldError: Sendable, Equatable {
        public var field: String
        public var message: String

        public init(field: String, message: String) {
            self.field = field
            self.message = message
        }
    }

    public var status: Status
    public var title: String
    public var detail: String?
    public var type: String
    public var errors: [FieldError]
    /// Extra headers for the answer, such as `Allow`, `Retry-After` or `WWW-Authenticate`.
    public var headers: Headers
    /// RFC 9457 extension members after the standard ones, each value already JSON text.
    public var extensions: [(name: String, json: String)] = []

    public init(
        _ status: Status, detail: String? = nil, title: String? = nil, type: String = "about:blank",
        errors: [FieldError] = [], headers: Headers = Headers()
    ) {
        self.status = status
        self.title = title ?? status.reason
        self.detail = detail
        self.type = type
        self.errors = errors
        self.headers = headers
    }

    public var description: String {
        "\(status.code) \(title)" + (detail.map { ": \($0)" } ?? "")
    }

    /// The answer: `application/problem+json` with type, title, status, detail and errors.
    public var response: Response {
        var json = "{\"type\":\(type.jsonQuoted),\"title\":\(title.jsonQuoted),\"status\":\(status.code)"
        if let detail { json += ",\"detail\":\(detail.jsonQuoted)" }
        if !errors.isEmpty {
            let items = errors.map { "{\"field\":\($0.field.jsonQuoted),\"message\":\($0.message.jsonQuoted)}" }
            json += ",\"errors\":[\(items.joined(separator: ","))]"
        }
        for member in extensions {
            json += ",\(member.name.jsonQuoted):\(member.json)"
        }
        json += "}"
        var headers = self.headers
        headers.replaceOrAdd("Content-Type", "application/problem+json")
        return Response(status: status, headers: headers, body: Array(json.utf8))
    }
}

/// Any error that knows its HTTP answer; the server renders `problem` instead of a bare 500.
public protocol ProblemConvertible: Error {
    var problem: Problem { get }
}

extension Problem: ProblemConvertible {
    public var problem: Problem { self }
}
