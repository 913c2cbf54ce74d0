import Crypto
import Foundation
import HTTPServer

/// Who may do what (docs/households.md): `RequestPipeline`'s authorize step, which turns the pipeline's
/// session into the request's, acting on one ledger for one caller, or refuses the request.
///
/// - No user and no `--api-token`: every route is open and acts on ledger 1 with no lookup (the json-server
///   drop-in); whether users exist comes from `AuthCache`, which asks PostgreSQL only after a notification.
/// - `--api-token`: that token acts as an owner of ledger 1.
/// - From the first user on, every route but the open ones needs a user's bearer token. 401 for no, unknown,
///   expired or malformed tokens (the challenge of `BearerTokenGate`); 404, one body for both, for a ledger
///   that does not exist or that the caller may not see; 403 where role or token scope forbids.
///
/// After the caller is known, `gates` run (the read-only mode, the delay), so a missing token is 401 before a
/// write is 403, as with `BearerTokenGate` in front.
struct Access: Sendable {
    let cache: AuthCache
    let apiToken: BearerTokenGate?
    let signupIsOpen: Bool
    let gates: [any RequestGate]

    /// The answer for a ledger that does not exist or that the caller may not see: the same either way.
    static let noSuchLedger = Problem(.notFound, detail: "no such ledger")

    /// Routes that serve only unscoped: under `/ledgers/{L}/…` they are 404.
    private static func isUnscopedOnly(_ route: String) -> Bool {
        route == "/health" || route == "/ready" || route == "/metrics" || route == "/openapi.yaml"
            || route.hasPrefix("/auth/") || route == LedgerRoutes.collection || route.hasPrefix(LedgerRoutes.collection + "/")
    }

    /// Routes answered without a token.
    private func isOpen(_ request: Request) -> Bool {
        switch (request.method, request.route) {
        case (_, "/health"), (_, "/ready"): true
        case (.post, AuthRoutes.tokens): true
        case (.post, AuthRoutes.users): signupIsOpen
        default: false
        }
    }

    func authorize(_ request: Request, _ database: Database) async throws -> Database {
        let isScoped = !request.pathPrefix.isEmpty
        if isScoped, let route = request.route, Self.isUnscopedOnly(route) {
            throw Problem(.notFound, detail: "No resource at \(request.pathPrefix)\(request.path).")
        }
        // The health checks answer without a look at users: they must answer while PostgreSQL is down.
        if request.route == "/health" || request.route == "/ready" {
            try await runGates(request)
            return database
        }
        if apiToken == nil, try await !cache.hasUsers(database) {
            // The drop-in: ledger 1 for everyone, as before households.
            if request.parameters["ledger"] != nil { try Self.requireFirstLedger(request) }
            try await runGates(request)
            return database
        }
        // A login may also mint from a bearer token instead of a password: then the token must be valid.
        if isOpen(request), request.route != AuthRoutes.tokens || request.headers["Authorization"] == nil {
            try await runGates(request)
            return database
        }
        let caller = try await authenticate(request, database)
        let scoped = try await scope(request, caller: caller, database: database)
        try await runGates(request)
        return scoped
    }

    private func runGates(_ request: Request) async throws {
        for gate in gates { try await gate.check(request) }
    }

    /// Ledger 1 is the only one `anyone` and the API token see: `/ledgers/1/…` or `/ledgers/default/…`.
    private static func requireFirstLedger(_ request: Request) throws {
        let value = request.parameters["ledger"]
        guard value == "default" || value == LedgerID.first.description else { throw noSuchLedger }
    }

    /// The caller behind the request's bearer token: the API token or a user's.
    func authenticate(_ request: Request, _ database: Database) async throws -> Caller {
        let token = try BearerTokenGate.token(of: request)
        if let apiToken, apiToken.matches(token) { return .apiToken }
        let digest = Array(SHA256.hash(data: Array(token.utf8)))
        guard let holder = try await cache.holder(digest: digest, database) else { throw BearerTokenGate.invalidToken }
        if let expiry = holder.expiresAtMilliseconds, expiry <= Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) {
            throw BearerTokenGate.invalidToken
        }
        return .user(holder, role: nil)
    }

    /// The session for `caller` on the request's ledger, after its role and scope allowed the method.
    private func scope(_ request: Request, caller: Caller, database: Database) async throws -> Database {
        let route = request.route ?? ""
        if route.hasPrefix("/auth/") {
            if let holder = caller.holder, holder.scope == .read, !request.method.isSafe, !route.hasPrefix(AuthRoutes.tokens) {
                throw Self.readOnlyToken
            }
            return database.scoped(to: database.ledger, for: caller)
        }
        if route == LedgerRoutes.collection {
            if let holder = caller.holder, !request.method.isSafe {
                if holder.scope == .read { throw Self.readOnlyToken }
                if holder.pin != nil { throw Problem(.forbidden, detail: "a token pinned to one ledger cannot create ledgers") }
            }
            return database.scoped(to: database.ledger, for: caller)
        }
        // Every other route acts on one ledger: the one the path names, else the caller's default.
        let named = request.parameters["ledger"]
        guard case .user(let holder, _) = caller else {
            if named != nil { try Self.requireFirstLedger(request) }
            return database.scoped(to: .first, for: caller)
        }
        let ledger: LedgerID
        if let named, named != "default" {
            guard let value = Int64(named), value > 0 else { throw Self.noSuchLedger }
            ledger = LedgerID(value)
            if let pin = holder.pin, pin != ledger { throw Self.noSuchLedger }
        } else {
            guard let unscoped = holder.unscopedLedger else { throw Self.noSuchLedger }
            ledger = unscoped
        }
        guard let role = try await cache.role(user: holder.userID, ledger: ledger, database) else { throw Self.noSuchLedger }
        if !request.method.isSafe {
            // Leaving a ledger is every member's right, whatever the role; the route checks who leaves.
            let isLeaving = request.method == .delete && route == LedgerRoutes.member
            if holder.scope == .read { throw Self.readOnlyToken }
            if role == .viewer, !isLeaving { throw Problem(.forbidden, detail: "a viewer of this ledger may only read") }
            if route == WholeDatabaseRoutes.path, role != .owner {
                throw Problem(.forbidden, detail: "only an owner of this ledger may replace it")
            }
        }
        return database.scoped(to: ledger, for: .user(holder, role: role))
    }

    /// Why a batch's operation may not run in the batch's session, or nil: identity and ledger routes act on
    /// no batch's ledger (404 there), and replacing the ledger is an owner's, as alone.
    static func batchRefusal(_ operation: Request, database: Database) -> Problem? {
        guard let route = operation.route else { return nil }
        if route.hasPrefix("/auth/") || route == LedgerRoutes.collection || route.hasPrefix(LedgerRoutes.collection + "/") {
            return Problem(.notFound, detail: "No resource at \(operation.path) in a batch.")
        }
        if route == WholeDatabaseRoutes.path, !operation.method.isSafe, database.caller.role != .owner {
            return Problem(.forbidden, detail: "only an owner of this ledger may replace it")
        }
        return nil
    }

    static let readOnlyToken = Problem(.forbidden, detail: "this token's scope is read; it may only read")
}
