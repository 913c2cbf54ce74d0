/// What a member may do in a ledger (docs/households.md, the roles table).
enum MemberRole: String, Sendable, CaseIterable {
    /// Everything, members and deleting the ledger included.
    case owner
    /// Reads and writes the ledger's data, renames it.
    case editor
    /// Reads only.
    case viewer
}

/// What a token may do: `read` only the safe methods, `write` whatever its user's role allows.
enum TokenScope: String, Sendable, CaseIterable {
    case read
    case write

    /// Whether a token of this scope may mint one of `other` (never a wider one).
    func covers(_ other: TokenScope) -> Bool { self == .write || other == .read }
}

/// Who a request acts for, decided once per request by `Access` and carried in its `Database`.
enum Caller: Sendable {
    /// No user and no `--api-token`: the json-server drop-in, where everyone owns ledger 1.
    case anyone
    /// The server's `--api-token`: an owner of ledger 1, no user.
    case apiToken
    /// A user's access token, with the user's role in the request's ledger when the route has one.
    case user(TokenHolder, role: MemberRole?)

    /// The user behind the request, when it is one.
    var holder: TokenHolder? {
        if case .user(let holder, _) = self { holder } else { nil }
    }

    /// The caller's role in the request's ledger: `anyone` and the API token own ledger 1, the only one they see.
    var role: MemberRole? {
        switch self {
        case .anyone, .apiToken: .owner
        case .user(_, let role): role
        }
    }
}

/// A valid access token and its user, as the token cache holds it.
struct TokenHolder: Sendable, Equatable {
    let tokenID: Int64
    let userID: Int64
    /// The one ledger the token may act on; nil: every ledger of its user.
    let pin: LedgerID?
    let scope: TokenScope
    /// Milliseconds since 1970 after which the token is refused; nil: never.
    let expiresAtMilliseconds: Int64?
    /// The user's default ledger: what unscoped routes act on when the token has no pin.
    let defaultLedger: LedgerID?

    /// The ledger unscoped routes act on: the pin, else the user's default.
    var unscopedLedger: LedgerID? { pin ?? defaultLedger }
}
