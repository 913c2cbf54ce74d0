/// Anything that answers a request: the router, every middleware chain, a single closure.
///
/// A handler may throw: a `ProblemConvertible` error becomes its problem answer, anything else
/// a bare 500 logged with the request id. Framing faults never reach a handler.
public protocol Handler: Sendable {
    func respond(to request: Request) async throws -> Response
}

/// A step around a handler that may change the request, the response, or answer by itself.
public protocol Middleware: Sendable {
    func respond(to request: Request, next: any Handler) async throws -> Response
}

extension Handler {
    /// This handler behind `middleware`; the first element is the outermost.
    public func wrapped(in middleware: [any Middleware]) -> any Handler {
        middleware.reversed().reduce(self as any Handler) { next, outer in
            MiddlewareHandler(middleware: outer, next: next)
        }
    }
}

private struct MiddlewareHandler: Handler {
    let middleware: any Middleware
    let next: any Handler

    func respond(to request: Request) async throws -> Response {
        try await middleware.respond(to: request, next: next)
    }
}
