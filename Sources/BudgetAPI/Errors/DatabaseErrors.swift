import HTTPServer
import Postgres

// Database facts get their API meaning here, keyed on the constraint names of `migrations/`: a typed
// resource's constraints are declared with the resource (`TypedResource.constraints`), the rest of the
// schema's below. Constraint names, not message text, decide the answer, so a reworded PostgreSQL message
// changes nothing.

extension PostgresError {
    /// A serialization failure or deadlock: the transaction lost a race and may simply be run again.
    var isConcurrentWrite: Bool {
        sqlState == SQLState.serializationFailure || sqlState == SQLState.deadlockDetected
    }
}

extension APIError {
    /// The error to answer for `error`: its API meaning when it is a database error that has one, else
    /// itself (a database error without one means a bug, and stays a logged 500). `RequestPipeline` renders
    /// what this answers for every request, and a batch for each of its operations.
    static func translating(_ error: any Error) -> any Error {
        guard let error = error as? PostgresError else { return error }
        return APIError(translating: error) ?? error
    }

    /// The API error a database error means, or nil when it means a bug (then it stays a logged 500).
    init?(translating error: PostgresError) {
        if error.isConnectionProblem {
            self = .databaseUnavailable
            return
        }
        if let constraint = TypedResources.constraint(brokenBy: error) {
            // A typed resource's own constraint, declared with it (`TypedResource.constraints`).
            self = constraint.error(error)
            return
        }
        switch (error.sqlState, error.constraint) {
        case (SQLState.uniqueViolation, "documents_pkey"):
            self = .conflict(field: "id", detail: "this collection already has a record with this id")
        case (SQLState.uniqueViolation, "collections_pkey"):
            self = .conflict(field: "name", detail: "a collection with this name already exists")
        case (SQLState.uniqueViolation, "users_name_unique"):
            self = .conflict(field: "name", detail: "a user with this name already exists (names are compared ignoring case)")
        case (SQLState.checkViolation, "memberships_keep_an_owner"):
            // 0016's deferred trigger: the change would leave a ledger without an owner.
            self = .conflict(field: "role", detail: "a ledger keeps at least one owner; make another member owner first")
        case (SQLState.foreignKeyViolation, "access_tokens_membership_fkey"):
            self = .invalidFields([.init(field: "ledgerId", message: "must be the id of one of your ledgers")])
        case (SQLState.sequenceGeneratorLimitExceeded, _):
            // A client chose the largest id, and server-assigned ids only ever follow the largest one taken
            // (docs/api.md), so none is left to assign: the record can still be created under an id of its own.
            self = .conflict(field: "id", detail: "no id is left to assign after the largest one taken (9223372036854775807); send the record's id")
        case (SQLState.invalidRegularExpression, _):
            // An invalid `_like` (or `:like`) pattern is the client's mistake, a 400, not json-server's 500
            // (docs/json-server.md).
            self = .malformedQuery("a _like pattern is not a valid regular expression (\(error.message ?? "rejected by PostgreSQL"))")
        case (SQLState.characterNotInRepertoire, _), (SQLState.untranslatableCharacter, _):
            // A NUL byte (or `\u0000`) somewhere in what the client sent: PostgreSQL text cannot hold it.
            self = .malformedInput("a value holds a NUL byte (\\u0000), which cannot be stored or compared")
        case (SQLState.queryCanceled, _):
            // Only statement_timeout cancels our queries; the transaction rolled back with it.
            self = .queryTimedOut
        case _ where error.isConcurrentWrite:
            // Database.withinTransaction runs its body again on this; elsewhere the client sees a 409.
            self = .concurrentWrite
        default:
            return nil
        }
    }
}
