/// Names each request's route before anything answers it, so the access log and metrics can count every
/// answer under its route template, also the ones given before routing: a CORS preflight, a 401, a
/// replayed idempotent write.
///
/// Put it outermost. A path no route has is left nil, which logs and metrics show as unmatched: label
/// values come from the route table only, never from what a client sent.
public struct RouteMiddleware: Middleware {
    private let router: Router
    private let otherRoutes: Set<String>

    /// - Parameters:
    ///   - router: the route table; the request is only looked up in it, not answered.
    ///   - otherRoutes: literal paths that a middleware answers instead of the router (such as a batch
    ///     endpoint), named as their own routes even where a router pattern would match them.
    public init(router: Router, otherRoutes: Set<String> = []) {
        self.router = router
        self.otherRoutes = otherRoutes
    }

    public func respond(to request: Request, next: any Handler) async throws -> Response {
        var request = request
        // The middleware's paths first: they answer before the router, whose patterns may match them too.
        request.route = otherRoutes.contains(request.path) ? request.path : router.route(for: request.path)
        return try await next.respond(to: request)
    }
}
