import BudgetCore
import HTTPServer

/// The ways a budget request can fail, each knowing its RFC 9457 problem (docs/api.md, Errors).
///
/// Handlers throw these; `APIError.translating` turns database facts into them; `Problem.answer` renders
/// them. Anything else thrown becomes a bare 500.
enum APIError: ProblemConvertible {
    case malformedBody(String)
    case malformedPath(String)
    case malformedQuery(String)
    /// A query parameter (or path segment) that is malformed or out of range, by name.
    case invalidParameter(String, String)
    /// Input that is well formed but that PostgreSQL cannot hold, wherever in the request it came from.
    case malformedInput(String)
    case unsupportedMediaType(received: String?, accepted: [String])
    case notFound(resource: String, id: Int64)
    case conflict(field: String, detail: String)
    /// A unique key the write would take belongs to the record at `location` (e.g. `/transactions/7`).
    case taken(field: String, detail: String, location: String)
    /// A concurrent write touched the same records first (serialization failure or deadlock).
    case concurrentWrite
    case invalidFields([Problem.FieldError])
    case databaseUnavailable
    /// A statement ran into its `statement_timeout` and was cancelled.
    case queryTimedOut

    /// How long a client should wait before retrying while PostgreSQL is unreachable.
    static let retryAfterSeconds = 1

    var problem: Problem {
        switch self {
        case .malformedBody(let detail), .malformedPath(let detail), .malformedQuery(let detail), .malformedInput(let detail):
            return Problem(.badRequest, detail: detail)
        case .invalidParameter(let name, let message):
            return Problem(.badRequest, detail: "\(name) \(message)", errors: [.init(field: name, message: message)])
        case .unsupportedMediaType(let received, let accepted):
            let was = received.map { "was \($0)" } ?? "was missing"
            return Problem(
                .unsupportedMediaType,
                detail: "Content-Type must be \(accepted.joined(separator: " or ")); it \(was)"
            )
        case .notFound(let resource, let id):
            return Problem(.notFound, detail: "\(resource) \(id) does not exist")
        case .conflict(let field, let detail):
            return Problem(.conflict, detail: detail, errors: [.init(field: field, message: detail)])
        case .taken(let field, let detail, let location):
            return Problem(.conflict, detail: detail, errors: [.init(field: field, message: detail)], headers: Headers([("Location", location)]))
        case .concurrentWrite:
            return Problem(.conflict, detail: "a concurrent write touched the same records; retry the request")
        case .invalidFields(let errors):
            let names = errors.map(\.field).joined(separator: ", ")
            return Problem(.unprocessableContent, detail: "invalid fields: \(names)", errors: errors)
        case .queryTimedOut:
            return Problem(
                .serviceUnavailable,
                detail: "the query took longer than the server allows and was cancelled; nothing was changed",
                headers: Headers([("Retry-After", "\(Self.retryAfterSeconds)")])
            )
        case .databaseUnavailable:
            return Problem(
                .serviceUnavailable,
                detail: "the database is unreachable; retry shortly",
                headers: Headers([("Retry-After", "\(Self.retryAfterSeconds)")])
            )
        }
    }
}

/// The query language (BudgetCore) refuses a list query without knowing HTTP; it answers as
/// `APIError.malformedQuery` would, a 400 with its detail.
extension MalformedQuery: ProblemConvertible {
    public var problem: Problem { APIError.malformedQuery(detail).problem }
}
