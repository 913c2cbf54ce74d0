// A copy of `WriteMode` from Sources/BudgetAPI/Support/TypedResource.swift, which cannot be compiled here
// without the database layer it also holds. Keep the two in step; a missing case fails the fuzz build.

/// How much of a record a write body must carry.
enum WriteMode: Sendable {
    /// POST and PUT: the whole record, so every required field must be present.
    case complete
    /// PATCH: only the fields present change (RFC 7396 merge, shallow).
    case partial
}
