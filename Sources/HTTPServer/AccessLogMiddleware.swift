import Logging

/// Logs one line per request at `.info`: method, target, status, body bytes, duration and request id.
///
/// The message reads `GET /categories/7 200 57 0.412ms`; the metadata holds the same facts as fields for
/// structured logs (`request-id`, `method`, `route`, `status`, `bytes`, `duration_ms`), the route being
/// the template (`/categories/:id`, or `unmatched`) that `RouteMiddleware` named. Headers are never
/// logged, so neither are credentials.
///
/// The request id itself is assigned by the server before any handler runs and always returned
/// in `X-Request-Id`; this middleware only reports it. Framing faults, which never reach
/// middleware, are logged by the connection in the same shape.
public struct AccessLogMiddleware: Middleware {
    /// The route label of a request whose path no route has.
    public static let unmatchedRoute = "unmatched"

    private let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func respond(to request: Request, next: any Handler) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next.respond(to: request)
            log(request, status: response.status, bytes: response.body.count, since: start)
            return response
        } catch {
            log(request, status: answeredStatus(for: error), bytes: nil, since: start)
            throw error
        }
    }

    private func log(_ request: Request, status: Status, bytes: Int?, since start: ContinuousClock.Instant) {
        let micros = microseconds(since: start)
        logger.info(
            "\(request.method) \(request.target) \(status.code) \(bytes.map(String.init) ?? "-") \(milliseconds(micros))ms",
            metadata: {
                var metadata: Logger.Metadata = [
                    "request-id": .string(request.id),
                    "method": .string(request.method.rawValue),
                    "route": .string(request.route ?? Self.unmatchedRoute),
                    "status": .stringConvertible(status.code),
                    "duration_ms": .stringConvertible(Double(micros) / 1000),
                ]
                if let bytes { metadata["bytes"] = .stringConvertible(bytes) }
                return metadata
            }()
        )
    }
}

/// The status the client gets for a handler's error, as the server's responder answers it.
func answeredStatus(for error: any Error) -> Status {
    if let error = error as? any ProblemConvertible { return error.problem.status }
    // A handler cancelled because its client hung up (Responder): no one reads the answer.
    if error is CancellationError, Task.isCancelled { return .serviceUnavailable }
    return .internalServerError
}

/// Whole microseconds elapsed since `start`.
func microseconds(since start: ContinuousClock.Instant) -> Int64 {
    let elapsed = ContinuousClock.now - start
    return elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
}

/// Microseconds as milliseconds with three decimals, e.g. `"1.024"`.
func milliseconds(_ micros: Int64) -> String {
    let fraction = String(micros % 1000)
    return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}
