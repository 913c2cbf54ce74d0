import Logging

/// Runs the application handler for one request and turns whatever it throws into an answer.
struct Responder: Sendable {
    let handler: any Handler
    let logger: Logger

    func respond(to request: Request) async -> Response {
        do {
            return try await handler.respond(to: request)
        } catch {
            return Problem.answer(to: error, for: request, logger: logger)
        }
    }
}

extension Problem {
    /// The answer to a request whose handling threw `error`: its problem when it is `ProblemConvertible`,
    /// else a bare 500 that tells the client nothing and logs everything under the request id.
    ///
    /// The one place an error becomes an answer: the server's responder and `RequestPipeline` call it.
    public static func answer(to error: any Error, for request: Request, logger: Logger) -> Response {
        if let error = error as? any ProblemConvertible { return error.problem.response }
        if error is CancellationError, Task.isCancelled {
            // The client went away (see ServerLoop.dispatch); nobody reads this answer, and nothing failed.
            return Problem(.serviceUnavailable, detail: "The request was cancelled.").response
        }
        logger.error(
            "handler failed for \(request.method) \(request.target): \(String(reflecting: error))",
            metadata: ["request-id": "\(request.id)"]
        )
        return Problem(.internalServerError, detail: "The server could not handle the request.").response
    }
}
