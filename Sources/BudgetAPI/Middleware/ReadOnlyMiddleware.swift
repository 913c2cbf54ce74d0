import HTTPServer

/// Refuses every write with 403 when the server runs with `--read-only` (SPEC §6), as json-server's flag does.
struct ReadOnlyMiddleware: Middleware {
    func respond(to request: Request, next: any Handler) async throws -> Response {
        guard request.method.isSafe else {
            throw Problem(.forbidden, detail: "the server is read-only; \(request.method) is not allowed")
        }
        return try await next.respond(to: request)
    }
}
