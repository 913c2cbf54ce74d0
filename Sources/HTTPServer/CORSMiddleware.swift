/// Answers CORS preflights and marks responses readable by browser apps on other origins (Fetch standard).
///
/// By default every origin is allowed and echoed back, as json-server does, with credentials; a list of
/// origins restricts it. Responses always carry `Vary: Origin` so shared caches keep per-origin copies.
public struct CORSMiddleware: Middleware {
    public enum AllowedOrigins: Sendable {
        case any
        case only(Set<String>)
    }

    private let allowedOrigins: AllowedOrigins
    private let exposedHeaders: String
    private let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"

    public init(allowedOrigins: AllowedOrigins = .any, exposedHeaders: [String]) {
        self.allowedOrigins = allowedOrigins
        self.exposedHeaders = exposedHeaders.joined(separator: ", ")
    }

    public func respond(to request: Request, next: any Handler) async throws -> Response {
        let origin = request.headers["Origin"].flatMap { isAllowed($0) ? $0 : nil }
        if request.method == .options, request.headers["Access-Control-Request-Method"] != nil {
            return preflight(request, origin: origin)
        }
        var response: Response
        do {
            response = try await next.respond(to: request)
        } catch let error as any ProblemConvertible {
            // An error a browser app cannot read is an error it cannot show; it gets the headers too.
            response = error.problem.response
        }
        response.headers.add("Vary", "Origin")
        if let origin {
            response.headers.replaceOrAdd("Access-Control-Allow-Origin", origin)
            response.headers.replaceOrAdd("Access-Control-Allow-Credentials", "true")
            response.headers.replaceOrAdd("Access-Control-Expose-Headers", exposedHeaders)
        }
        return response
    }

    /// A preflight is answered here, before routing: 204 with what the browser asked to use.
    private func preflight(_ request: Request, origin: String?) -> Response {
        var response = Response(status: .noContent)
        response.headers.add("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
        guard let origin else { return response }
        response.headers.add("Access-Control-Allow-Origin", origin)
        response.headers.add("Access-Control-Allow-Credentials", "true")
        response.headers.add("Access-Control-Allow-Methods", allowedMethods)
        if let requested = request.headers["Access-Control-Request-Headers"] {
            response.headers.add("Access-Control-Allow-Headers", requested)
        }
        // Browsers cache the preflight for this long (Chromium caps it at 2 hours).
        response.headers.add("Access-Control-Max-Age", "600")
        return response
    }

    private func isAllowed(_ origin: String) -> Bool {
        switch allowedOrigins {
        case .any: true
        case .only(let origins): origins.contains(origin)
        }
    }
}
