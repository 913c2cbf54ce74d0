import HTTPServer
import Postgres

/// Creating users, the one way both `POST /auth/users` and `budget-server user add` take (docs/households.md).
public enum Users {
    /// What a user's name and password must be; the errors name the member, as a 422 does.
    static func problems(name: String?, password: String?) -> [Problem.FieldError] {
        var errors: [Problem.FieldError] = []
        if let message = nameProblem(name) { errors.append(.init(field: "name", message: message)) }
        if let password {
            if password.unicodeScalars.count < minimumPasswordLength {
                errors.append(.init(field: "password", message: "must have at least \(minimumPasswordLength) characters"))
            }
        } else {
            errors.append(.init(field: "password", message: "is required and must be a string"))
        }
        return errors
    }

    static let minimumPasswordLength = 8

    /// Why `name` cannot name a user, a ledger or a token (1-100 characters), or nil when it can.
    static func nameProblem(_ name: String?) -> String? {
        guard let name else { return "is required and must be a string" }
        let length = name.unicodeScalars.count
        guard (1...100).contains(length) else { return "must have 1 to 100 characters" }
        guard !name.unicodeScalars.contains("\u{0}") else { return "must not hold a NUL character" }
        return nil
    }

    /// Creates a user: the first owns ledger 1 (the data the server held), each later one a new empty
    /// ledger. Answers the user's id. `passwordHash` comes from `PasswordHasher`.
    static func create(name: String, passwordHash: String, on connection: Connection) throws -> Int64 {
        try connection.transaction { connection in
            _ = try connection.query(HouseholdQueries.lockUsers)
            if try connection.query(HouseholdQueries.nameTaken(name)).count > 0 { throw nameTaken }
            let isFirst = try connection.query(HouseholdQueries.anyUser).first?.column(0) != "t"
            let user = try connection.query(HouseholdQueries.insertUser(name: name, passwordHash: passwordHash)).first?.decode(Int64.self, at: 0) ?? 0
            let ledger: LedgerID
            if isFirst {
                ledger = .first
            } else {
                // Named after its owner, so that a member of several ledgers tells them apart; renamed with PATCH.
                ledger = LedgerID(try connection.query(HouseholdQueries.insertLedger(name: name)).first?.decode(Int64.self, at: 0) ?? 0)
            }
            _ = try connection.query(HouseholdQueries.insertMembership(ledger: ledger, user: user, role: .owner))
            _ = try connection.query(HouseholdQueries.setDefaultLedger(user: user, ledger: ledger))
            return user
        }
    }

    static let nameTaken = APIError.conflict(field: "name", detail: "a user with this name already exists (names are compared ignoring case)")

    /// The scrypt hash of a password for `budget-server user add NAME`, at the default cost; throws a message for
    /// the operator when name or password do not qualify.
    public static func hashForCommandLine(name: String, password: String) async throws -> String {
        if let first = problems(name: name, password: password).first { throw UserError(message: "\(first.field) \(first.message)") }
        return try await PasswordHasher().hash(password)
    }

    /// Creates a user from the command line with a hash from `hashForCommandLine`; answers the new user's id.
    public static func add(name: String, passwordHash: String, on connection: Connection) throws -> Int64 {
        do {
            return try create(name: name, passwordHash: passwordHash, on: connection)
        } catch APIError.conflict {
            throw UserError(message: "a user named \(name) already exists (names are compared ignoring case)")
        }
    }

    /// Why the command line could not create a user.
    public struct UserError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}
