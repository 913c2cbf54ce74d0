/// Answers CORS preflights and marks answers readable by browser apps on other origins (Fetch standard).
///
/// By default every origin is allowed and echoed back, as json-server does, with credentials; a list of
/// origins restricts it. Answers always carry `Vary: Origin` so shared caches keep per-origin copies, and
/// `Access-Control-Expose-Headers`, with or without an `Origin`, as json-server sends it: a proxy or cache
/// in front may serve the answer to a browser that did send one.
/// It decorates whatever answer comes back, a rendered problem included: an error a browser app cannot
/// read is an error it cannot show.
public struct CORSPolicy: Middleware {
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

    public func respond(to request: Request, next: (Request) async throws -> Response) async throws -> Response {
        let origin = request.headers["Origin"].flatMap { isAllowed($0) ? $0 : nil }
        if request.method == .options, request.headers["Access-Control-Request-Method"] != nil {
            return preflight(request, origin: origin)
        }
        var response = try await next(request)
        // After a route's own `Vary: Accept`, in the same line.
        response.headers.addToList("Vary", "Origin")
        response.headers.replaceOrAdd("Access-Control-Expose-Headers", exposedHeaders)
        if let origin {
            response.headers.replaceOrAdd("Access-Control-Allow-Origin", origin)
            response.headers.replaceOrAdd("Access-Control-Allow-Credentials", "true")
        }
        return response
    }

    /// A preflight is answered here, before any gate: 204 with what the browser asked to use.
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
