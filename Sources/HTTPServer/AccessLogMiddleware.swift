import Logging

/// Logs one line per request at `.info`: method, target, status, body bytes, duration and request id.
///
/// The request id itself is assigned by the server before any handler runs and always returned
/// in `X-Request-Id`; this middleware only reports it. Framing faults, which never reach
/// middleware, are logged by the connection in the same shape.
public struct AccessLogMiddleware: Middleware {
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
            let status = (error as? any ProblemConvertible)?.problem.status ?? .internalServerError
            log(request, status: status, bytes: nil, since: start)
            throw error
        }
    }

    private func log(_ request: Request, status: Status, bytes: Int?, since start: ContinuousClock.Instant) {
        logger.info(
            "\(request.method) \(request.target) \(status.code) \(bytes.map(String.init) ?? "-") \(milliseconds(since: start))ms",
            metadata: ["request-id": "\(request.id)"]
        )
    }
}

/// Milliseconds elapsed since `start`, with three decimals.
func milliseconds(since start: ContinuousClock.Instant) -> String {
    let elapsed = ContinuousClock.now - start
    let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
    let fraction = String(micros % 1000)
    return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}
