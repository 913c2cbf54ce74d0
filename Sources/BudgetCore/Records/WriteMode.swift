/// How much of a record a write body must carry.
public enum WriteMode: Sendable {
    /// POST and PUT: the whole record, so every required field must be present.
    case complete
    /// PATCH: only the fields present change (RFC 7396 merge, shallow).
    case partial
    /// A whole record of a seed file or an export: as `complete`, and it also restores the members the server
    /// keeps that link records (a transfer side's `transferId`, an account's `lastReconciledAt`), so that
    /// export → seed → export is unchanged.
    case seed

    /// Whether every required field must be present.
    public var isComplete: Bool { self != .partial }
}
