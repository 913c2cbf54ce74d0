import BudgetCore
import Crypto
import Foundation
import HTTPServer
import Postgres

/// Identity under `/auth` (not `/users`, a common json-server collection name): sign-up, log-in, tokens and
/// who am I (docs/households.md). `Access` decides who reaches each route; these handlers only act.
struct AuthRoutes: Sendable {
    static let users = "/auth/users"
    static let tokens = "/auth/tokens"
    static let token = "/auth/tokens/:id"
    static let me = "/auth/me"

    /// Failed logins of one user within `throttleWindow` seconds that make the next ones 429.
    static let throttleLimit = 10
    static let throttleWindow = 15 * 60

    let hasher: PasswordHasher
    let signupIsOpen: Bool
    let cache: AuthCache

    func register(in router: inout Router<Database>) {
        router.post(Self.users) { request, database in try await signUp(request, database) }
        router.post(Self.tokens) { request, database in try await mint(request, database) }
        router.get(Self.tokens) { _, database in try await listTokens(database) }
        router.delete(Self.token) { request, database in try await revoke(request, database) }
        router.get(Self.me) { _, database in try await me(database) }
    }

    /// The user a route needs, or the 401 for a caller who is none (the API token, the drop-in's anyone).
    static func user(_ database: Database) throws -> TokenHolder {
        guard let holder = database.caller.holder else {
            throw Problem(
                .unauthorized, detail: "This route needs a user's Authorization: Bearer token.",
                headers: ["WWW-Authenticate": "Bearer"])
        }
        return holder
    }

    private func signUp(_ request: Request, _ database: Database) async throws -> Response {
        guard signupIsOpen else {
            throw Problem(.forbidden, detail: "sign-up is closed on this server; an operator adds users with budget-server user add")
        }
        let body = try RequestBody.object(request)
        let name = body["name"].flatMap(Self.string), password = body["password"].flatMap(Self.string)
        let errors = Users.problems(name: name, password: password)
        guard errors.isEmpty, let name, let password else { throw APIError.invalidFields(errors) }
        if try await database.query(HouseholdQueries.nameTaken(name)).count > 0 { throw Users.nameTaken }
        let hash = try await hasher.hash(password)
        let user = try await database.run { connection in try Users.create(name: name, passwordHash: hash, on: connection) }
        cache.changed()
        let json = try await database.query(HouseholdQueries.userJSON(user)).firstJSON() ?? []
        return .json(json, status: .created)
    }

    private func mint(_ request: Request, _ database: Database) async throws -> Response {
        let body = try RequestBody.object(request)
        var errors: [Problem.FieldError] = []
        let tokenName = body["tokenName"].map { Self.string($0) } ?? "token"
        if let message = Users.nameProblem(tokenName) { errors.append(.init(field: "tokenName", message: message)) }
        var scope: TokenScope?
        if let value = body["scope"], value != .null {
            scope = Self.string(value).flatMap(TokenScope.init(rawValue:))
            if scope == nil { errors.append(.init(field: "scope", message: "must be read or write")) }
        }
        var ledger: LedgerID?
        if let value = body["ledgerId"], value != .null {
            if case .number(let text) = value, let id = Int64(text), id > 0 {
                ledger = LedgerID(id)
            } else {
                errors.append(.init(field: "ledgerId", message: "must be the id of one of your ledgers"))
            }
        }
        var expiresAt: String?
        if let value = body["expiresAt"], value != .null {
            if let text = Self.string(value), text.count <= 64,
                let instant = try? await database.query(HouseholdQueries.futureInstant(text)).first?.column(0)
            {
                expiresAt = instant
            } else {
                errors.append(.init(field: "expiresAt", message: "must be a future date-time such as 2030-01-01T00:00:00Z"))
            }
        }
        // With a bearer token: another token for the same user, never wider than the one presented.
        let user: Int64
        if let holder = database.caller.holder {
            user = holder.userID
            if let pin = holder.pin {
                if let ledger, ledger != pin { throw Problem(.forbidden, detail: "a token pinned to one ledger cannot mint one for another") }
                ledger = pin
            }
            if let wanted = scope, !holder.scope.covers(wanted) { throw Problem(.forbidden, detail: "a read token cannot mint a write token") }
            scope = scope ?? holder.scope
            if let limit = holder.expiresAtMilliseconds {
                if let expiresAt {
                    if try await database.query(HouseholdQueries.notLater(expiresAt, than: limit)).first?.column(0) != "t" {
                        throw Problem(.forbidden, detail: "a new token cannot outlive the token that mints it")
                    }
                } else {
                    expiresAt = try await database.query(HouseholdQueries.limitText(limit)).first?.column(0)
                }
            }
            guard errors.isEmpty else { throw APIError.invalidFields(errors) }
        } else {
            let name = body["name"].flatMap(Self.string), password = body["password"].flatMap(Self.string)
            if name == nil { errors.append(.init(field: "name", message: "is required and must be a string")) }
            if password == nil { errors.append(.init(field: "password", message: "is required and must be a string")) }
            guard errors.isEmpty, let name, let password else { throw APIError.invalidFields(errors) }
            user = try await logIn(name: name, password: password, database)
        }
        if let ledger, try await database.query(HouseholdQueries.role(user: user, ledger: ledger)).count == 0 {
            throw APIError.invalidFields([.init(field: "ledgerId", message: "must be the id of one of your ledgers")])
        }
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = Self.base64URL(secret)
        let digest = Array(SHA256.hash(data: Array(token.utf8)))
        let query = HouseholdQueries.insertToken(
            user: user, name: tokenName ?? "token", digest: digest, ledger: ledger, scope: scope ?? .write, expiresAt: expiresAt)
        guard let json = try await database.query(query).firstJSON(), case .object(var object) = try JSONParser.parse(json) else {
            throw APIError.databaseUnavailable
        }
        // The secret, once: only its SHA-256 is kept.
        var answer = JSONObject()
        answer["id"] = object["id"]
        answer["token"] = .string(token)
        object["id"] = nil
        for member in object.members { answer[member.name] = member.value }
        return .json(JSONWriter.bytes(.object(answer)), status: .created)
    }

    /// The user `name` and `password` identify; 401 for an unknown name or a wrong password alike (both check
    /// a hash), 429 after `throttleLimit` failures within `throttleWindow`.
    private func logIn(name: String, password: String, _ database: Database) async throws -> Int64 {
        let row = try await database.query(HouseholdQueries.login(name: name)).first
        let user = row?.column(0).flatMap(Int64.init)
        if let user {
            let failures = try await database.query(HouseholdQueries.recentFailures(user: user, window: Self.throttleWindow)).first
            if let count = failures?.column(0).flatMap(Int.init), count >= Self.throttleLimit {
                let wait = max(1, failures?.column(1).flatMap(Int.init) ?? 1)
                throw Problem(
                    .tooManyRequests, detail: "too many failed logins for this user; retry later",
                    headers: Headers([("Retry-After", "\(wait)")]))
            }
        }
        let isRight = try await hasher.verify(password, against: row?.column(1))
        guard let user, isRight else {
            if let user { _ = try await database.query(HouseholdQueries.recordFailure(user: user, window: Self.throttleWindow)) }
            throw Problem(.unauthorized, detail: "the name or the password is wrong", headers: ["WWW-Authenticate": "Bearer"])
        }
        return user
    }

    private func listTokens(_ database: Database) async throws -> Response {
        let holder = try Self.user(database)
        return .json(try await database.query(HouseholdQueries.tokens(user: holder.userID)).firstJSON() ?? Array("[]".utf8))
    }

    private func revoke(_ request: Request, _ database: Database) async throws -> Response {
        let holder = try Self.user(database)
        let text = try request.parameters.require("id")
        guard let id = Int64(text) else { throw Problem(.notFound, detail: "no such token") }
        let result = try await database.query(HouseholdQueries.deleteToken(id: id, user: holder.userID))
        guard result.affectedRows > 0 else { throw Problem(.notFound, detail: "no such token") }
        cache.changed()
        return Response(status: .noContent)
    }

    private func me(_ database: Database) async throws -> Response {
        let holder = try Self.user(database)
        guard let json = try await database.query(HouseholdQueries.me(user: holder.userID, pin: holder.pin)).firstJSON() else {
            throw BearerTokenGate.invalidToken
        }
        return .json(json)
    }

    static func string(_ value: JSONValue) -> String? {
        if case .string(let text) = value { text } else { nil }
    }

    /// RFC 4648 §5 without padding: letters, digits, - and _, a valid RFC 6750 b64token.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
