/// Anything that answers a request: a `RequestPipeline`, a router of `Void` context, a middleware chain.
///
/// A handler may throw: a `ProblemConvertible` error becomes its problem answer, anything else a bare 500
/// logged with the request id (`Problem.answer(to:for:logger:)`). Framing faults never reach a handler.
public protocol Handler: Sendable {
    func respond(to request: Request) async throws -> Response
}

/// A step around a handler that may change the request, the response, or answer by itself.
///
/// `next` is not escaping: a middleware calls it at most once, before it returns, so composing steps
/// allocates nothing per request.
public protocol Middleware: Sendable {
    func respond(to request: Request, next: (Request) async throws -> Response) async throws -> Response
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
        try await middleware.respond(to: request, next: next.respond)
    }
}

extension Middleware {
    /// A route handler behind this middleware; the context passes through untouched.
    public func wrapping<Context>(_ body: @escaping Router<Context>.Body) -> Router<Context>.Body {
        { request, context in try await respond(to: request) { request in try await body(request, context) } }
    }
}
