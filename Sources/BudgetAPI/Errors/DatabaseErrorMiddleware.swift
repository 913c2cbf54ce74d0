import HTTPServer
import Postgres

/// Gives database facts their API meaning, in one place, keyed on the constraint names of `migrations/`.
///
/// Constraint names, not message text, decide the answer, so a reworded PostgreSQL message changes nothing.
struct DatabaseErrorMiddleware: Middleware {
    func respond(to request: Request, next: any Handler) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch let error as PostgresError {
            throw APIError(translating: error) ?? error
        }
    }
}

extension APIError {
    /// The API error a database error means, or nil when it means a bug (then it stays a logged 500).
    init?(translating error: PostgresError) {
        if error.isConnectionProblem {
            self = .databaseUnavailable
            return
        }
        switch (error.sqlState, error.constraint) {
        case (SQLState.uniqueViolation, "categories_title_unique"):
            self = .conflict(field: "title", detail: "a category with this title already exists (titles are compared ignoring case)")
        case (SQLState.uniqueViolation, "categories_pkey"), (SQLState.uniqueViolation, "transactions_pkey"):
            self = .conflict(field: "id", detail: "this id is already taken")
        case (SQLState.foreignKeyViolation, "transactions_category_id_fkey"):
            self = .invalidFields([.init(field: "categoryId", message: "no category has this id")])
        case (SQLState.serializationFailure, _), (SQLState.deadlockDetected, _):
            self = .conflict(field: "id", detail: "a concurrent write touched the same records; retry the request")
        default:
            return nil
        }
    }
}
