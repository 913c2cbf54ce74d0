import Logging

/// The path every request of an application takes, in one place and in this order:
///
/// 1. A `PathScope` moves a scope prefix (`/ledgers/7`) out of the path; then `Router.resolve` matches the route, once; the endpoint travels with the request from here on. With
///    `trustsProxy`, the request's `origin` is resolved from its proxy's headers, once (`ClientOrigin.forwarded`).
/// 2. Observers (access log, metrics) hear that the request started.
/// 3. `CORSPolicy` answers a preflight by itself; any other answer passes back through it to be decorated.
/// 4. Gates (a bearer token, a read-only mode) may refuse the request by throwing a problem.
/// 5. `authorize` turns the pipeline's context into this request's (an application's database session acting
///    for the caller), or refuses the request by throwing; then the endpoint answers with that context.
/// 6. Whatever was thrown on the way becomes its answer in `Problem.answer`, after `translate` gave the
///    application's own errors their HTTP meaning (a unique violation is a 409, say).
/// 7. `headers` go into every answer that does not set them itself; observers hear the final answer, and
///    so does `onAnswer`.
///
/// What applies only to some routes (validators, preconditions, idempotency keys) is not here: it wraps
/// those routes' handlers when the router is built (`Router.mapHandlers`), so a plain GET passes only
/// what acts on it.
public struct RequestPipeline<Context: Sendable>: Handler {
    private let router: Router<Context>
    private let context: Context
    private let cors: CORSPolicy?
    private let gates: [any RequestGate]
    private let observers: [any RequestObserver]
    private let headers: Headers
    private let translate: @Sendable (any Error) -> any Error
    private let onAnswer: @Sendable (Request, Response) -> Void
    private let authorize: @Sendable (Request, Context) async throws -> Context
    private let logger: Logger
    private let trustsProxy: Bool
    private let scope: PathScope?

    /// - Parameters:
    ///   - headers: fields every answer carries unless it sets them itself (caching rules, say).
    ///   - trustsProxy: whether `Forwarded` and `X-Forwarded-*` describe the client; only when every request
    ///     comes through a proxy that sets them. Otherwise they are ignored, since any client can send them.
    ///   - scope: a prefix every route serves under (`PathScope`); an answer's `Location` and
    ///     `Content-Location` keep the prefix.
    ///   - translate: the error to render for one an endpoint threw; by default the error itself.
    ///   - onAnswer: called with every answer after the observers, e.g. to start work a write enables.
    ///   - authorize: the context one request's endpoint gets, from the request (its credentials, say) and the
    ///     pipeline's `context`; it refuses the request by throwing. By default every request gets `context`.
    public init(
        router: Router<Context>, context: Context, cors: CORSPolicy? = nil, gates: [any RequestGate] = [],
        observers: [any RequestObserver] = [], headers: Headers = Headers(), trustsProxy: Bool = false, scope: PathScope? = nil,
        logger: Logger,
        translate: @escaping @Sendable (any Error) -> any Error = { $0 },
        authorize: @escaping @Sendable (Request, Context) async throws -> Context = { _, context in context },
        onAnswer: @escaping @Sendable (Request, Response) -> Void = { _, _ in }
    ) {
        self.authorize = authorize
        self.router = router
        self.context = context
        self.cors = cors
        self.gates = gates
        self.observers = observers
        self.headers = headers
        self.trustsProxy = trustsProxy
        self.scope = scope
        self.logger = logger
        self.translate = translate
        self.onAnswer = onAnswer
    }

    public func respond(to request: Request) async -> Response {
        let start = ContinuousClock.now
        var request = request
        scope?.apply(to: &request)
        let endpoint = router.resolve(&request)
        if trustsProxy { request.origin = .forwarded(headers: request.headers, direct: request.origin) }
        for observer in observers { observer.requestStarted(request) }
        var response: Response
        if let cors {
            do {
                response = try await cors.respond(to: request) { request in await answer(request, endpoint: endpoint) }
            } catch {
                response = Problem.answer(to: error, for: request, logger: logger)
            }
        } else {
            response = await answer(request, endpoint: endpoint)
        }
        response.keepPrefix(of: request)
        for field in headers where !response.headers.contains(field.name) {
            response.headers.add(field.name, field.value)
        }
        let duration = ContinuousClock.now - start
        for observer in observers { observer.requestFinished(request, response: response, duration: duration) }
        onAnswer(request, response)
        return response
    }

    /// The endpoint's answer behind the gates, with anything thrown rendered as its answer.
    private func answer(_ request: Request, endpoint: Endpoint<Context>) async -> Response {
        do {
            for gate in gates { try await gate.check(request) }
            // A method its route does not have is 405 whoever asks (RFC 9110 §15.5.6): the routes' methods
            // are public (openapi.yaml), so there is nothing to authorize, also on routes open to anyone.
            let isMethodRefusal = !endpoint.isRouted && request.route != nil
            return try await endpoint.respond(to: request, context: isMethodRefusal ? context : authorize(request, context))
        } catch {
            return Problem.answer(to: translate(error), for: request, logger: logger)
        }
    }
}

/// A check a request must pass before its endpoint runs; it refuses by throwing (a `Problem`, say).
public protocol RequestGate: Sendable {
    func check(_ request: Request) async throws
}
