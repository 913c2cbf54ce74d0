/// Matches method and path to a handler; the router is itself just a handler.
///
/// Patterns are `/`-separated segments, each a literal or `:name`, e.g. `"/categories/:id"`.
/// A literal segment wins over a parameter at the same depth. An unknown path answers 404; a
/// known path with another method answers 405 with `Allow` (RFC 9110 §15.5.6). HEAD is served
/// by the GET handler, and the connection drops the body (RFC 9110 §9.3.2). A matched request carries
/// its route's template in `Request.route`, and `route(for:)` names it without answering.
public struct Router: Handler {
    public typealias Body = @Sendable (Request) async throws -> Response

    private var root = RouteNode()

    public init() {}

    public mutating func add(_ method: Method, _ pattern: String, _ handler: @escaping Body) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        root.insert(segments[...], pattern: pattern, method: method, handler: handler)
    }

    public mutating func get(_ pattern: String, _ handler: @escaping Body) { add(.get, pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping Body) { add(.post, pattern, handler) }
    public mutating func put(_ pattern: String, _ handler: @escaping Body) { add(.put, pattern, handler) }
    public mutating func patch(_ pattern: String, _ handler: @escaping Body) { add(.patch, pattern, handler) }
    public mutating func delete(_ pattern: String, _ handler: @escaping Body) { add(.delete, pattern, handler) }

    public func respond(to request: Request) async throws -> Response {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var captured: [(String, String)] = []
        guard request.path.hasPrefix("/"), let node = root.match(segments[...], captured: &captured) else {
            throw Problem(.notFound, detail: "No resource at \(request.path).")
        }
        let handler = node.handlers[request.method] ?? (request.method == .head ? node.handlers[.get] : nil)
        guard let handler else {
            var allowed = Set(node.handlers.keys.map(\.rawValue))
            if allowed.contains("GET") { allowed.insert("HEAD") }
            throw Problem(
                .methodNotAllowed,
                detail: "\(request.method) is not allowed on \(request.path).",
                headers: ["Allow": allowed.sorted().joined(separator: ", ")]
            )
        }
        var request = request
        request.route = node.pattern
        for (name, value) in captured { request.parameters.set(name, value) }
        return try await handler(request)
    }

    /// Whether `respond` would hand a request with this method and path to a handler, rather than answer
    /// 404 or 405 itself.
    public func accepts(_ method: Method, on path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var captured: [(String, String)] = []
        guard let node = root.match(segments[...], captured: &captured) else { return false }
        return node.handlers[method] != nil || (method == .head && node.handlers[.get] != nil)
    }

    /// The template of the route whose pattern `path` matches, whatever the method, e.g. `"/categories/:id"`
    /// for `"/categories/7"`; nil when `respond` would answer 404.
    public func route(for path: String) -> String? {
        guard path.hasPrefix("/") else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var captured: [(String, String)] = []
        return root.match(segments[...], captured: &captured)?.pattern
    }
}

/// One segment position in the route tree.
private struct RouteNode: Sendable {
    var literals: [Substring: RouteNode] = [:]
    var parameters: [(name: String, node: RouteNode)] = []
    var handlers: [Method: Router.Body] = [:]
    /// The pattern that ends at this node, as first registered; set exactly when `handlers` is not empty.
    var pattern: String?

    mutating func insert(_ segments: ArraySlice<Substring>, pattern: String, method: Method, handler: @escaping Router.Body) {
        guard let segment = segments.first else {
            handlers[method] = handler
            if self.pattern == nil { self.pattern = pattern }
            return
        }
        let rest = segments.dropFirst()
        if segment.hasPrefix(":") {
            let name = String(segment.dropFirst())
            if let index = parameters.firstIndex(where: { $0.name == name }) {
                parameters[index].node.insert(rest, pattern: pattern, method: method, handler: handler)
            } else {
                var node = RouteNode()
                node.insert(rest, pattern: pattern, method: method, handler: handler)
                parameters.append((name: name, node: node))
            }
        } else {
            literals[segment, default: RouteNode()].insert(rest, pattern: pattern, method: method, handler: handler)
        }
    }

    /// The node for `segments`, trying literals before parameters and backtracking on a dead end.
    func match(_ segments: ArraySlice<Substring>, captured: inout [(String, String)]) -> RouteNode? {
        guard let segment = segments.first else { return handlers.isEmpty ? nil : self }
        let rest = segments.dropFirst()
        if let found = literals[segment]?.match(rest, captured: &captured) { return found }
        guard !segment.isEmpty else { return nil }
        for (name, node) in parameters {
            let mark = captured.count
            captured.append((name, String(segment)))
            if let found = node.match(rest, captured: &captured) { return found }
            captured.removeSubrange(mark...)
        }
        return nil
    }
}
