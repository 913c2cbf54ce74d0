import HTTPServer

/// Honours `Idempotency-Key` on writes (SPEC §5): a retry replays the first answer instead of writing again.
///
/// SPEC §5 names POST and PATCH; PUT and DELETE take a key too, so that a retried DELETE replays its 200
/// rather than answering 404 for the record it deleted itself.
struct IdempotencyMiddleware: Middleware {
    private static let keyedMethods: Set<Method> = [.post, .put, .patch, .delete]

    let idempotency: Idempotency
    /// Whether a route takes the request; one that does not is answered 404 or 405 by the router, key or not.
    let isRouted: @Sendable (Request) -> Bool

    func respond(to request: Request, next: any Handler) async throws -> Response {
        // The route lookup only for requests that carry a key: a plain write pays nothing here.
        guard Self.keyedMethods.contains(request.method), request.headers.contains(IdempotencyKey.headerName),
              isRouted(request), let key = try IdempotencyKey.from(request) else {
            return try await next.respond(to: request)
        }
        return try await idempotency.run(key: key, fingerprint: RequestFingerprint(request)) {
            try await next.respond(to: request)
        }
    }
}
