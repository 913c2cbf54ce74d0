import LogHandlers
import Logging
import Sockets

/// Logs one line per answered request at `.info`: method, target, status, body bytes, duration and request id.
///
/// The message reads `GET /categories/7 200 57 0.412ms`; a streamed answer (`Response.stream`), whose size is
/// not known yet, reads `chunked` for the bytes and has no `bytes` field, and its duration ends at its head.
/// The metadata holds the same facts as fields for structured logs (`request-id`, `method`, `route`,
/// `status`, `bytes`, `duration_ms`), the route being the template (`/categories/:id`, or `unmatched`) that `Router.resolve` named, and `client`, the client's
/// address from the request's `origin` (the TCP peer, or what a trusted proxy reported) when known.
/// Headers are never logged, so neither are credentials.
///
/// The request id itself is assigned by the server before any handler runs and always returned in
/// `X-Request-Id`; this only reports it. Framing faults, which never reach a handler, are logged by the
/// connection in the same shape.
///
/// When the logger's handler is one of LogHandlers' (`AccessLogHandler`), the fields go to it as an
/// `AccessLogEntry` and it writes the same line without a metadata dictionary (bench/README.md
/// "bench/health"); any other handler gets the message and metadata through swift-log.
public struct AccessLog: RequestObserver {
    /// The route label of a request whose path no route has.
    public static let unmatchedRoute = "unmatched"

    /// What swift-log names as the source of a line logged here: this module's name.
    private static let source = String(#fileID.prefix { $0 != "/" })

    private let logger: Logger
    private let accessHandler: (any AccessLogHandler)?

    public init(logger: Logger) {
        self.logger = logger
        accessHandler = logger.handler as? any AccessLogHandler
    }

    public func requestStarted(_ request: Request) {}

    public func requestFinished(_ request: Request, response: Response, duration: Duration) {
        guard logger.logLevel <= .info else { return }
        let entry = AccessLogEntry(
            requestID: request.id, method: request.method.rawValue, target: request.target,
            route: request.fullRoute ?? Self.unmatchedRoute, status: response.status.code,
            bytes: response.stream == nil ? response.body.count : nil, microseconds: duration.wholeMicroseconds,
            client: request.origin.address)
        if let accessHandler {
            accessHandler.logAccess(entry, source: Self.source)
        } else {
            logger.info("\(entry.message)", metadata: entry.metadata)
        }
    }
}

/// Something told of every request a `RequestPipeline` answers: an access log, request metrics.
public protocol RequestObserver: Sendable {
    /// Called once the request is routed, before anything answers it.
    func requestStarted(_ request: Request)
    /// Called with the final answer, the one the client gets, however it was made.
    func requestFinished(_ request: Request, response: Response, duration: Duration)
}
