import Logging

/// Runs the application handler for one request and turns whatever it throws into an answer.
struct Responder: Sendable {
    let handler: any Handler
    let logger: Logger

    /// The handler's response, its problem if it threw a `ProblemConvertible`, else a bare 500.
    func respond(to request: Request) async -> Response {
        do {
            return try await handler.respond(to: request)
        } catch let error as any ProblemConvertible {
            return error.problem.response
        } catch is CancellationError where Task.isCancelled {
            // The client went away (see EventLoop.dispatch); nobody reads this answer, and nothing failed.
            return Problem(.serviceUnavailable, detail: "The request was cancelled.").response
        } catch {
            // The client learns nothing about the failure; the log gets everything, keyed by request id.
            logger.error(
                "handler failed for \(request.method) \(request.target): \(String(reflecting: error))",
                metadata: ["request-id": "\(request.id)"]
            )
            return Problem(.internalServerError, detail: "The server could not handle the request.").response
        }
    }
}
