import HTTPServer

/// The ways a request with an idempotency key is refused (docs/sync.md, Idempotency keys).
enum IdempotencyError: ProblemConvertible {
    /// The key is missing its quotes' end, too long, empty or holds characters a header cannot carry.
    case malformedKey(String)
    /// The key's first request is still running, possibly on another server process.
    case inProgress(IdempotencyKey)
    /// The key was used before for a different request.
    case reusedForAnotherRequest(IdempotencyKey)

    var problem: Problem {
        switch self {
        case .malformedKey(let detail):
            return Problem(
                .badRequest, detail: "malformed \(IdempotencyKey.headerName): \(detail)",
                errors: [.init(field: IdempotencyKey.headerName, message: detail)])
        case .inProgress(let key):
            return Problem(
                .conflict,
                detail: "a request with \(IdempotencyKey.headerName) \(key) is still being processed; retry after it finished",
                type: "urn:budget-server:problem:idempotency-key-in-use",
                headers: Headers([("Retry-After", "1")]))
        case .reusedForAnotherRequest(let key):
            return Problem(
                .unprocessableContent,
                detail: "\(IdempotencyKey.headerName) \(key) was already used for a different request "
                    + "(method, path or body differ); use a new key for a new request",
                type: "urn:budget-server:problem:idempotency-key-reused",
                errors: [.init(field: IdempotencyKey.headerName, message: "already used for a different request")])
        }
    }
}
