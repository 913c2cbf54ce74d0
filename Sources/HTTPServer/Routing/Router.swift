/// Matches method and path to a handler, once per request.
///
/// Patterns are `/`-separated segments, each a literal or `:name`, e.g. `"/categories/:id"`. A literal
/// segment wins over a parameter at the same depth. `resolve` names the request's route and captures its
/// parameters; the endpoint it returns travels with the request from there, so nothing matches the path
/// again. An unknown path is 404; a known path with another method is 405 with `Allow` (RFC 9110
/// §15.5.6). HEAD is served by the GET handler, and the connection drops the body (RFC 9110 §9.3.2).
///
/// `Context` is what every handler gets besides the request, chosen by whoever calls the endpoint (an
/// application passes its database session there); a router of `Void` context is itself a `Handler`.
public struct Router<Context: Sendable>: Sendable {
    public typealias Body = @Sendable (Request, Context) async throws -> Response

    /// The route tree holds each handler as its index in `bodies`, so that the tree is not generic: matching
    /// a generic tree looked up its type metadata at run time, on every request.
    private var root = RouteNode()
    private var bodies: [Body] = []

    public init() {}

    public mutating func add(_ method: Method, _ pattern: String, _ handler: @escaping Body) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        bodies.append(handler)
        root.insert(segments[...], pattern: pattern, method: method, handler: bodies.count - 1)
    }

    public mutating func get(_ pattern: String, _ handler: @escaping Body) { add(.get, pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping Body) { add(.post, pattern, handler) }
    public mutating func put(_ pattern: String, _ handler: @escaping Body) { add(.put, pattern, handler) }
    public mutating func patch(_ pattern: String, _ handler: @escaping Body) { add(.patch, pattern, handler) }
    public mutating func delete(_ pattern: String, _ handler: @escaping Body) { add(.delete, pattern, handler) }

    /// The request's endpoint: its route template goes into `request.route` (for a 405 too, never for a
    /// 404) and its path parameters into `request.parameters`.
    public func resolve(_ request: inout Request) -> Endpoint<Context> {
        let segments = Self.segments(of: request.path)
        var captured: [(String, String)] = []
        guard request.path.hasPrefix("/"), let node = root.match(segments[...], captured: &captured) else {
            return Endpoint(refusal: Problem(.notFound, detail: "No resource at \(request.path)."))
        }
        request.route = node.pattern
        guard let handler = node.handler(for: request.method).map({ bodies[$0] }) else {
            var allowed = Set(node.handlers.keys.map(\.rawValue))
            if allowed.contains("GET") { allowed.insert("HEAD") }
            return Endpoint(
                refusal: Problem(
                    .methodNotAllowed,
                    detail: "\(request.method) is not allowed on \(request.path).",
                    headers: ["Allow": allowed.sorted().joined(separator: ", ")]
                ))
        }
        for (name, value) in captured { request.parameters.set(name, value) }
        return Endpoint(handler: handler)
    }

    /// The path's segments after its leading `/`. An ASCII path is split by its bytes, which finds the same
    /// slashes as splitting by Characters (a `/` starts no cluster in ASCII) without grapheme breaking; any
    /// other path is split by Characters, as a pattern is.
    private static func segments(of path: String) -> ArraySlice<Substring> {
        guard path.utf8.allSatisfy({ $0 < 0x80 }) else {
            return path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        }
        return path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Substring($0) }.dropFirst()
    }

    /// Every registered route, as its method and the pattern it was registered with (HEAD, which GET serves,
    /// is not listed), sorted by pattern then method: what a test walks to cover each route.
    public var routes: [RouteSignature] {
        var found: [RouteSignature] = []
        root.collect(into: &found)
        return found.sorted { ($0.pattern, $0.method.rawValue) < ($1.pattern, $1.method.rawValue) }
    }

    /// The same routes with every handler replaced by `transform(method, handlers)`, where `handlers` are all
    /// the handlers of the handler's route by method: a place to wrap each route in what applies to it.
    public func mapHandlers(_ transform: (Method, [Method: Body]) -> Body) -> Router {
        var mapped = self
        root.forEachRoute { handlers in
            let bodies = handlers.mapValues { self.bodies[$0] }
            for (method, index) in handlers { mapped.bodies[index] = transform(method, bodies) }
        }
        return mapped
    }
}

/// A registered route: its method and its pattern, e.g. `GET /categories/:id`.
public struct RouteSignature: Hashable, Sendable, CustomStringConvertible {
    public let method: Method
    public let pattern: String

    public init(_ method: Method, _ pattern: String) {
        self.method = method
        self.pattern = pattern
    }

    public var description: String { "\(method.rawValue) \(pattern)" }
}

/// What a request was routed to: a handler, or the 404 or 405 that answers it instead.
public struct Endpoint<Context: Sendable>: Sendable {
    private let handler: Router<Context>.Body?
    private let refusal: Problem?

    init(handler: @escaping Router<Context>.Body) {
        self.handler = handler
        refusal = nil
    }

    init(refusal: Problem) {
        handler = nil
        self.refusal = refusal
    }

    /// Whether a route's handler takes the request (rather than a 404 or 405).
    public var isRouted: Bool { handler != nil }

    /// The handler's answer, or the 404 or 405 thrown as a problem.
    public func respond(to request: Request, context: Context) async throws -> Response {
        guard let handler else { throw refusal! }
        return try await handler(request, context)
    }
}

extension Router where Context == Void {
    public mutating func get(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        add(.get, pattern) { request, _ in try await handler(request) }
    }

    public mutating func post(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        add(.post, pattern) { request, _ in try await handler(request) }
    }

    public mutating func put(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        add(.put, pattern) { request, _ in try await handler(request) }
    }

    public mutating func patch(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        add(.patch, pattern) { request, _ in try await handler(request) }
    }

    public mutating func delete(_ pattern: String, _ handler: @escaping @Sendable (Request) async throws -> Response) {
        add(.delete, pattern) { request, _ in try await handler(request) }
    }
}

extension Router: Handler where Context == Void {
    public func respond(to request: Request) async throws -> Response {
        var request = request
        return try await resolve(&request).respond(to: request, context: ())
    }
}

/// One segment position in the route tree; a handler is its index in the router's `bodies`.
private struct RouteNode: Sendable {
    var literals: [Substring: RouteNode] = [:]
    var parameters: [(name: String, node: RouteNode)] = []
    var handlers: [Method: Int] = [:]
    /// The pattern that ends at this node, as first registered; set exactly when `handlers` is not empty.
    var pattern: String?

    mutating func insert(_ segments: ArraySlice<Substring>, pattern: String, method: Method, handler: Int) {
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

    func handler(for method: Method) -> Int? {
        handlers[method] ?? (method == .head ? handlers[.get] : nil)
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

    func collect(into found: inout [RouteSignature]) {
        if let pattern { found += handlers.keys.map { RouteSignature($0, pattern) } }
        for node in literals.values { node.collect(into: &found) }
        for (_, node) in parameters { node.collect(into: &found) }
    }

    /// Calls `body` with the handlers of every node that has some.
    func forEachRoute(_ body: ([Method: Int]) -> Void) {
        if !handlers.isEmpty { body(handlers) }
        for node in literals.values { node.forEachRoute(body) }
        for (_, node) in parameters { node.forEachRoute(body) }
    }
}
