/// An answer to a request; the server adds Content-Length (or Transfer-Encoding), Connection and X-Request-Id itself.
public struct Response: Sendable {
    public var status: Status
    public var headers: Headers
    /// The whole body; with `stream` set, the part of it produced so far.
    public var body: [UInt8]
    /// The rest of the body, produced while the connection sends it (chunked); nil when `body` is all of it.
    public var stream: (any BodyStream)?

    public init(status: Status = .ok, headers: Headers = Headers(), body: [UInt8] = [], stream: (any BodyStream)? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream
    }

    /// A JSON answer with `Content-Type: application/json; charset=utf-8`.
    public static func json(_ body: [UInt8], status: Status = .ok) -> Response {
        Response(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: body)
    }

    /// A plain-text answer with `Content-Type: text/plain; charset=utf-8`.
    public static func text(_ body: String, status: Status = .ok) -> Response {
        Response(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(body.utf8))
    }
}
