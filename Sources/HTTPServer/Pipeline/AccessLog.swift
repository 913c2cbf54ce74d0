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
public struct AccessLog: RequestObserver {
    /// The route label of a request whose path no route has.
    public static let unmatchedRoute = "unmatched"

    private let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func requestStarted(_ request: Request) {}

    public func requestFinished(_ request: Request, response: Response, duration: Duration) {
        let micros = duration.wholeMicroseconds
        // Room for all seven fields at once: a literal of six grew (rehashing every key) when `client` came.
        var metadata = Logger.Metadata(minimumCapacity: 7)
        metadata["request-id"] = .string(request.id)
        metadata["method"] = .string(request.method.rawValue)
        metadata["route"] = .string(request.fullRoute ?? Self.unmatchedRoute)
        metadata["status"] = .stringConvertible(response.status.code)
        metadata["bytes"] = .stringConvertible(response.body.count)
        metadata["duration_ms"] = .stringConvertible(Double(micros) / 1000)
        if let client = request.origin.address { metadata["client"] = .string(client) }
        let isStreamed = response.stream != nil
        if isStreamed { metadata["bytes"] = nil }
        logger.info(Self.message(request, response, isStreamed: isStreamed, micros: micros), metadata: metadata)
    }

    /// `GET /categories/7 200 57 0.412ms`, or `chunked` in place of the size: appended into one String
    /// reserved up front, where an interpolation grew its buffer several times per line.
    private static func message(_ request: Request, _ response: Response, isStreamed: Bool, micros: Int64) -> Logger.Message {
        var text = ""
        text.reserveCapacity(request.method.rawValue.utf8.count + request.target.utf8.count + 32)
        text += request.method.rawValue
        text += " "
        text += request.target
        text += " "
        text += String(response.status.code)
        text += isStreamed ? " chunked " : " " + String(response.body.count) + " "
        text += milliseconds(micros)
        text += "ms"
        return Logger.Message(stringLiteral: text)
    }

    /// Microseconds as milliseconds with three decimals, e.g. `"1.024"`.
    static func milliseconds(_ micros: Int64) -> String {
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

/// Something told of every request a `RequestPipeline` answers: an access log, request metrics.
public protocol RequestObserver: Sendable {
    /// Called once the request is routed, before anything answers it.
    func requestStarted(_ request: Request)
    /// Called with the final answer, the one the client gets, however it was made.
    func requestFinished(_ request: Request, response: Response, duration: Duration)
}
