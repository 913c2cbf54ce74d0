/// One HTTP request as a handler sees it: framing already checked, body already de-chunked.
public struct Request: Sendable {
    public var method: Method
    /// The raw request-target, e.g. `"/categories/1/transactions?x=1"`.
    public var target: String
    /// The percent-decoded path without the query, e.g. `"/categories/1/transactions"`.
    public var path: String
    /// Decoded query items in order (`+` is a space); repeated names are kept.
    public var query: [(name: String, value: String)]
    public var headers: Headers
    public var body: [UInt8]
    /// Path parameters, filled in by `Router.resolve`.
    public var parameters = Parameters()
    /// The template of the route the path belongs to, e.g. `"/categories/:id"`, never the raw path; nil
    /// while unknown or when no route has this path. Set by `Router.resolve` before anything else runs, so
    /// logs and metrics can name a route without unbounded label values.
    public var route: String?
    /// The scope prefix `PathScope` moved out of `path`, as the client sent it, e.g. `"/ledgers/7"`; empty for
    /// an unscoped request. `Location` headers keep it (`RequestPipeline`), so a client stays in its scope.
    public var pathPrefix = ""
    /// The template of that prefix, e.g. `"/ledgers/:ledger"`; empty for an unscoped request.
    public var routePrefix = ""
    /// The route as logs and metrics name it: the scope's template and the route, e.g.
    /// `"/ledgers/:ledger/categories/:id"`; nil when no route has this path.
    public var fullRoute: String? { route.map { routePrefix + $0 } }
    /// The client's sane `X-Request-Id`, or one the server made up.
    public var id: String
    /// Whether the connection stays open after the answer (RFC 9112 §9.3).
    public var isKeepAlive: Bool
    /// The media type, lower-cased and without parameters, e.g. `"application/json"`.
    public var contentType: String?
    /// The address of the TCP peer, e.g. `"192.0.2.7"`; a proxy's when there is one. Nil for a request
    /// that did not arrive over a socket (unit tests, a batch's operations).
    public var peer: String?
    /// The scheme, host and client address as the client sees them: `ClientOrigin.direct` unless a
    /// `RequestPipeline` that trusts its proxy resolved them from the proxy's headers.
    public var origin: ClientOrigin

    /// Builds a request for unit tests, splitting path and query out of `target`.
    public init(method: Method, target: String, headers: Headers = Headers(), body: [UInt8] = []) {
        let components = RequestTarget(target)
        self.init(
            method: method, target: target, components: components ?? RequestTarget(path: target, query: []),
            headers: headers, body: body, isHTTP10: false, peer: nil
        )
    }

    package init(
        method: Method, target: String, components: RequestTarget, headers: Headers, body: [UInt8], isHTTP10: Bool,
        peer: String?
    ) {
        self.method = method
        self.target = target
        self.path = components.path
        self.query = components.query
        self.headers = headers
        self.body = body
        self.id = RequestID.sanitized(headers["X-Request-Id"]) ?? RequestID.make()
        self.isKeepAlive = Self.keepsAlive(headers: headers, isHTTP10: isHTTP10)
        self.contentType = headers["Content-Type"].map(Self.mediaType)
        self.peer = peer
        self.origin = .direct(headers: headers, peer: peer)
    }

    /// The first query value named `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive".
    private static func keepsAlive(headers: Headers, isHTTP10: Bool) -> Bool {
        guard headers.contains("Connection") else { return !isHTTP10 }
        let options = headers.values(for: "Connection").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingASCIIWhitespace().lowercased() }
        if options.contains("close") { return false }
        return !isHTTP10 || options.contains("keep-alive")
    }

    private static func mediaType(_ value: String) -> String {
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingASCIIWhitespace().lowercased()
    }
}

extension StringProtocol {
    /// Drops leading and trailing spaces and tabs (HTTP's OWS).
    package func trimmingASCIIWhitespace() -> Substring {
        let text = Substring(self)
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}
