import HTTPServer

/// Honours `Idempotency-Key` on a write route (docs/sync.md): a retry replays the first answer instead of
/// writing again.
///
/// POST and PATCH need it most; PUT and DELETE take a key too, so that a retried DELETE replays its 200
/// rather than answering 404 for the record it deleted itself. Batch operations carry their key in the same
/// header, so a key in a batch behaves exactly as on its own.
struct IdempotentWrites: Sendable {
    static let methods: Set<Method> = [.post, .put, .patch, .delete]

    let idempotency: Idempotency

    /// `endpoint` run once per key: the request's key (if any) is claimed in the transaction the endpoint
    /// then runs in, with the answer stored beside it.
    func wrapping(_ endpoint: @escaping RouteHandler) -> RouteHandler {
        { request, database in
            guard let key = try IdempotencyKey.from(request) else { return try await endpoint(request, database) }
            return try await idempotency.run(request, key: key, fingerprint: RequestFingerprint(request), database: database) {
                try await endpoint(request, $0)
            }
        }
    }
}

/// A route's handler, given the request and the database session it must use.
typealias RouteHandler = Router<Database>.Body
