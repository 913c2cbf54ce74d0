import Postgres

// What `DatabaseErrors.swift` asks before its own list: the typed resources' declared constraints
// (Sources/BudgetAPI/Errors/ResourceConstraint.swift). The registry names the resources' routes, so it
// cannot be compiled here; the list-query target's statements break no constraint, so none is found, and
// `translating` answers from `DatabaseErrors.swift`'s own cases as on the server.

struct ResourceConstraint {
    func error(_ error: PostgresError) -> APIError { .databaseUnavailable }
}

enum TypedResources {
    static func constraint(brokenBy error: PostgresError) -> ResourceConstraint? { nil }
}
