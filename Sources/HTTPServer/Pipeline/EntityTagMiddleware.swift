/// Tags successful representations with a strong `ETag` and answers a matching `If-None-Match` with 304.
///
/// The tag is computed from the bytes the handler produced, so every handler gets validators without
/// knowing about them; a handler that knows better (a version column) sets its own `ETag` and that one
/// is kept and compared. A streamed answer (`Response.stream`) has no bytes to hash before it is sent: it
/// is tagged only when its handler tagged it, and a 304 closes its stream unread. `If-Match` on writes
/// needs the stored state and is the application's business.
public struct EntityTagMiddleware: Middleware {
    private let representationHeaders: [String]
    private let percentEncodingAdvice: String?

    /// - Parameters:
    ///   - representationHeaders: headers that are part of the representation besides its body,
    ///     such as `X-Total-Count`, so a change in them changes the tag as well.
    ///   - percentEncodingAdvice: what the 400 for a percent-encoded `If-None-Match` adds after naming the cause
    ///     (`PercentEncodedHeader`), such as where the application documents the remedy.
    public init(representationHeaders: [String] = [], percentEncodingAdvice: String? = nil) {
        self.representationHeaders = representationHeaders
        self.percentEncodingAdvice = percentEncodingAdvice
    }

    public func respond(to request: Request, next: (Request) async throws -> Response) async throws -> Response {
        let isRead = request.method == .get || request.method == .head
        // Parsed before the handler runs: a malformed header is the client's mistake, whatever the resource says.
        let condition = isRead ? try request.entityTagCondition("If-None-Match", percentEncodingAdvice: percentEncodingAdvice) : nil
        var response = try await next(request)
        guard isTagged(response, for: request.method) else { return response }
        let tag: EntityTag?
        if let existing = response.headers["ETag"] {
            // Read only when there is a condition to compare it with: a constant answer tagged once
            // (`/health`) is not parsed again on every request.
            guard condition != nil else { return response }
            tag = EntityTag(headerValue: existing)
        } else if response.stream != nil {
            return response
        } else {
            let computed = EntityTag.strong(for: response, including: representationHeaders)
            response.headers.add("ETag", computed.headerValue)
            tag = computed
        }
        // RFC 9110 §13.1.2: If-None-Match uses weak comparison, and only a 2xx answer is evaluated against it.
        guard let condition, response.status == .ok, condition.matchesWeakly(tag) else { return response }
        return notModified(from: response)
    }

    /// Which answers carry a representation of the target resource worth a validator (RFC 9110 §8.8.3).
    private func isTagged(_ response: Response, for method: Method) -> Bool {
        switch (method, response.status) {
        case (.get, .ok), (.head, .ok), (.put, .ok), (.put, .created), (.patch, .ok), (.patch, .created):
            return true
        case (.post, .created):
            // Only then does the body represent a resource the client can later ask for conditionally.
            return response.headers.contains("Location")
        case (.post, .ok):
            // RFC 9110 §8.7: a Content-Location says the body is the current representation of that resource,
            // such as the record an action (not a create) changed.
            return response.headers.contains("Content-Location")
        default:
            return false
        }
    }

    /// RFC 9110 §15.4.5: a 304 has no content but keeps the 200's headers (ETag, Vary, Cache-Control …)
    /// so caches can update what they stored; the server itself adds no Content-Length to a 304.
    private func notModified(from response: Response) -> Response {
        response.stream?.close()
        var headers = response.headers
        headers.remove("Content-Type")
        return Response(status: .notModified, headers: headers)
    }
}
