import Foundation
import Postgres
import Synchronization

/// Each process's memory of tokens and roles: `digest → token holder` and `(user, ledger) → role`, filled on a
/// miss by one indexed query and dropped whole whenever PostgreSQL says anything changed (docs/households.md).
///
/// Invalidation rides on a `Notifications` listening on `budget_auth`, where 0016's triggers send one
/// notification per statement that touches users, tokens or memberships. The listener bumps its generation
/// for every notification, when it (re)connects and when it loses its connection; this cache drops everything
/// when the generation moved since it last looked. It fills nothing, and trusts nothing it holds, while the
/// listener is not listening (not yet, or reconnecting: a revocation then would go unheard), and entries older
/// than `lifetime` are dropped as a backstop for a lost notification.
///
/// Whether the server has users is cached the same way: once true it stays true; while false it is asked
/// again only after the generation moved, so a server without users asks PostgreSQL once, not per request.
final class AuthCache: Sendable {
    private struct RoleKey: Hashable {
        let user: Int64
        let ledger: LedgerID
    }

    private struct State {
        var generation: UInt64 = 0
        var filledSince = ContinuousClock.now
        var tokens: [[UInt8]: TokenHolder?] = [:]
        var roles: [RoleKey: MemberRole?] = [:]
        var hasUsers = false
        var usersCheckedAt: UInt64?
    }

    /// The listener on `budget_auth`; owned here, stopped by `stop()`.
    let notifications: Notifications
    /// How long any entry is trusted without a notification.
    let lifetime: Duration
    /// Entries beyond this drop the whole cache, so a flood of made-up tokens cannot grow it without bound.
    static let maximumEntries = 10_000

    private let state = Mutex(State())  // every mutable field, guarded by the mutex

    init(notifications: Notifications, lifetime: Duration = .seconds(60)) {
        self.notifications = notifications
        self.lifetime = lifetime
    }

    /// Starts listening now rather than at the first request, so entries can be kept from the start.
    func start() {
        _ = notifications.generation
    }

    /// Drops this process's entries at once after it changed users, tokens or memberships itself; the other
    /// processes hear of it through PostgreSQL.
    func changed() {
        notifications.signal()
    }

    func stop() {
        notifications.stop()
    }

    /// The generation now, with everything dropped that it makes stale.
    private func currentGeneration() -> UInt64 {
        let generation = notifications.generation
        let isListening = notifications.isListening
        state.withLock { state in
            let now = ContinuousClock.now
            // Not listening: a revocation would go unheard, so nothing cached is trusted until it listens again.
            if state.generation != generation || now - state.filledSince > lifetime || !isListening {
                state.generation = generation
                state.filledSince = now
                state.tokens.removeAll(keepingCapacity: true)
                state.roles.removeAll(keepingCapacity: true)
            }
        }
        return generation
    }

    /// Keeps what was read at `generation`, unless something changed while it was read.
    private func fill(at generation: UInt64, _ body: (inout State) -> Void) {
        guard generation != 0, notifications.isListening else { return }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.tokens.count + state.roles.count >= Self.maximumEntries {
                state.tokens.removeAll()
                state.roles.removeAll()
            }
            body(&state)
        }
    }

    /// Whether any user exists; from memory but for the first look and after an auth notification.
    func hasUsers(_ database: Database) async throws -> Bool {
        let generation = notifications.generation
        let known = state.withLock { state -> Bool? in
            if state.hasUsers { return true }
            return state.usersCheckedAt == generation ? false : nil
        }
        if let known { return known }
        let exists = try await database.query(HouseholdQueries.anyUser).first?.column(0) == "t"
        state.withLock { state in
            if exists { state.hasUsers = true } else if generation != 0 { state.usersCheckedAt = generation }
        }
        return exists
    }

    /// The holder of the token whose SHA-256 is `digest`, or nil for an unknown or revoked one (expiry is the
    /// caller's to check).
    func holder(digest: [UInt8], _ database: Database) async throws -> TokenHolder? {
        let generation = currentGeneration()
        if let cached = state.withLock({ $0.tokens[digest] }) { return cached }
        let result = try await database.query(HouseholdQueries.tokenHolder(digest: digest))
        let holder = result.first.map(HouseholdQueries.holder(from:))
        fill(at: generation) { $0.tokens[digest] = .some(holder) }
        return holder
    }

    /// `user`'s role in `ledger`, or nil when they are no member (or the ledger does not exist).
    func role(user: Int64, ledger: LedgerID, _ database: Database) async throws -> MemberRole? {
        let generation = currentGeneration()
        let key = RoleKey(user: user, ledger: ledger)
        if let cached = state.withLock({ $0.roles[key] }) { return cached }
        let result = try await database.query(HouseholdQueries.role(user: user, ledger: ledger))
        let role = result.first?.column(0).flatMap(MemberRole.init(rawValue:))
        fill(at: generation) { $0.roles[key] = .some(role) }
        return role
    }
}

extension QueryResult {
    /// The first row, or nil for none.
    var first: Row? { count > 0 ? self[0] : nil }
}
