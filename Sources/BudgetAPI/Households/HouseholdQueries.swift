import Postgres

/// The SQL of users, tokens, ledgers and memberships (migrations/0016), in one place; answers are rendered as
/// JSON by PostgreSQL in the answers' own form (`SQLFragments`: compact, timestamps in whole seconds with `Z`).
enum HouseholdQueries {
    static let anyUser: Query = "SELECT EXISTS (SELECT 1 FROM users)"

    /// Columns: token id, user id, pin, scope, expiry in ms since 1970, the user's default ledger (their
    /// lowest-id ledger once they left the default).
    static func tokenHolder(digest: [UInt8]) -> Query {
        """
        SELECT t.id, t.user_id, t.ledger_id, t.scope, (extract(epoch FROM t.expires_at) * 1000)::bigint,
               COALESCE(u.default_ledger_id, (SELECT min(m.ledger_id) FROM memberships m WHERE m.user_id = u.id))
        FROM access_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.digest = decode(\(hex(digest)), 'hex')
        """
    }

    static func holder(from row: Row) -> TokenHolder {
        TokenHolder(
            tokenID: Int64(row.column(0) ?? "") ?? 0, userID: Int64(row.column(1) ?? "") ?? 0,
            pin: row.column(2).flatMap(Int64.init).map(LedgerID.init), scope: row.column(3).flatMap(TokenScope.init(rawValue:)) ?? .read,
            expiresAtMilliseconds: row.column(4).flatMap(Int64.init), defaultLedger: row.column(5).flatMap(Int64.init).map(LedgerID.init))
    }

    static func role(user: Int64, ledger: LedgerID) -> Query {
        "SELECT role FROM memberships WHERE ledger_id = \(ledger) AND user_id = \(user)"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: Users

    /// Serialises user creation, so that exactly one user is the first (and owns ledger 1).
    static let lockUsers: Query = "SELECT pg_advisory_xact_lock(7089063307574158692)"
    static func nameTaken(_ name: String) -> Query { "SELECT 1 FROM users WHERE lower(name) = lower(\(name))" }

    static func insertUser(name: String, passwordHash: String) -> Query {
        "INSERT INTO users (name, password_hash) VALUES (\(name), \(passwordHash)) RETURNING id"
    }

    static func insertLedger(name: String) -> Query {
        "INSERT INTO ledgers (name) VALUES (\(name)) RETURNING id"
    }

    static func insertMembership(ledger: LedgerID, user: Int64, role: MemberRole) -> Query {
        "INSERT INTO memberships (ledger_id, user_id, role) VALUES (\(ledger), \(user), \(role.rawValue))"
    }

    static func setDefaultLedger(user: Int64, ledger: LedgerID) -> Query {
        "UPDATE users SET default_ledger_id = \(ledger) WHERE id = \(user)"
    }

    static func userJSON(_ user: Int64) -> Query {
        "SELECT \(SQLFragments.jsonObject(columns: "u.id, u.name, \(createdAt("u"))")) FROM users u WHERE u.id = \(user)"
    }

    /// Columns: id, password hash; for a login by name (compared ignoring case).
    static func login(name: String) -> Query {
        "SELECT id, password_hash FROM users WHERE lower(name) = lower(\(name))"
    }

    /// Failed logins of `user` in the throttle's window, and the seconds until the oldest leaves it.
    static func recentFailures(user: Int64, window: Int) -> Query {
        """
        SELECT count(*), COALESCE(ceil(extract(epoch FROM min(attempted_at) + make_interval(secs => \(Int64(window))) - clock_timestamp())), 0)::bigint
        FROM login_attempts WHERE user_id = \(user) AND attempted_at > clock_timestamp() - make_interval(secs => \(Int64(window)))
        """
    }

    static func recordFailure(user: Int64, window: Int) -> Query {
        """
        WITH purged AS (DELETE FROM login_attempts
                        WHERE user_id = \(user) AND attempted_at < clock_timestamp() - make_interval(secs => \(Int64(window))))
        INSERT INTO login_attempts (user_id) VALUES (\(user))
        """
    }

    static func me(user: Int64, pin: LedgerID?) -> Query {
        """
        SELECT \(SQLFragments.jsonObject(columns: """
            u.id, u.name,
            COALESCE(\(pin), u.default_ledger_id, (SELECT min(m.ledger_id) FROM memberships m WHERE m.user_id = u.id)) AS "defaultLedgerId",
            (SELECT \(SQLFragments.jsonArray(of: SQLFragments.jsonObject(columns: "l.id, l.name, m.role"), orderBy: "l.id"))
             FROM memberships m JOIN ledgers l ON l.id = m.ledger_id
             WHERE m.user_id = u.id AND (\(pin)::bigint IS NULL OR l.id = \(pin)))::json AS ledgers
            """))
        FROM users u WHERE u.id = \(user)
        """
    }

    // MARK: Tokens

    /// A token as its routes answer it (never its digest), from a row of `access_tokens`.
    static let tokenColumns: Query = SQLFragments.jsonObject(
        columns: """
            access_tokens.id, access_tokens.name AS "tokenName", access_tokens.scope, access_tokens.ledger_id AS "ledgerId",
            \(SQLFragments.timestamp("access_tokens.expires_at")) AS "expiresAt", \(createdAt("access_tokens"))
            """)

    static func insertToken(
        user: Int64, name: String, digest: [UInt8], ledger: LedgerID?, scope: TokenScope, expiresAt: String?
    ) -> Query {
        """
        INSERT INTO access_tokens (user_id, name, digest, ledger_id, scope, expires_at)
        VALUES (\(user), \(name), decode(\(hex(digest)), 'hex'), \(ledger), \(scope.rawValue), \(expiresAt)::timestamptz)
        RETURNING \(tokenColumns)
        """
    }

    static func tokens(user: Int64) -> Query {
        "SELECT \(SQLFragments.jsonArray(of: tokenColumns, orderBy: "id")) FROM access_tokens WHERE user_id = \(user)"
    }

    static func deleteToken(id: Int64, user: Int64) -> Query {
        "DELETE FROM access_tokens WHERE id = \(id) AND user_id = \(user)"
    }

    /// The instant `text` names, in the future, as PostgreSQL's text; nil when it is past.
    static func futureInstant(_ text: String) -> Query {
        "SELECT t::text FROM (SELECT \(text)::timestamptz AS t) x WHERE t > now()"
    }

    /// Whether `instant` is no later than `limit` (both timestamptz texts).
    static func notLater(_ instant: String, than limit: Int64) -> Query {
        "SELECT \(instant)::timestamptz <= to_timestamp(\(limit) / 1000.0)"
    }

    static func limitText(_ milliseconds: Int64) -> Query {
        "SELECT to_timestamp(\(milliseconds) / 1000.0)::text"
    }

    // MARK: Ledgers and members

    /// A ledger with the caller's role in it, from `ledgers l` joined to the caller's `memberships m`.
    static let ledgerColumns: Query = SQLFragments.jsonObject(
        columns: """
            l.id, l.name, m.role, \(createdAt("l")), \(SQLFragments.timestamp("l.updated_at")) AS "updatedAt"
            """)

    static func ledgers(user: Int64, pin: LedgerID?) -> Query {
        """
        SELECT \(SQLFragments.jsonArray(of: ledgerColumns, orderBy: "l.id"))
        FROM memberships m JOIN ledgers l ON l.id = m.ledger_id
        WHERE m.user_id = \(user) AND (\(pin)::bigint IS NULL OR l.id = \(pin))
        """
    }

    static func ledger(_ ledger: LedgerID, user: Int64) -> Query {
        """
        SELECT \(ledgerColumns) FROM memberships m JOIN ledgers l ON l.id = m.ledger_id
        WHERE l.id = \(ledger) AND m.user_id = \(user)
        """
    }

    /// A ledger as `anyone` and the API token see it: ledger 1, as an owner.
    static func ledgerAsOwner(_ ledger: LedgerID) -> Query {
        """
        SELECT \(SQLFragments.jsonObject(columns: """
            l.id, l.name, 'owner' AS role, \(createdAt("l")), \(SQLFragments.timestamp("l.updated_at")) AS "updatedAt"
            """))
        FROM ledgers l WHERE l.id = \(ledger)
        """
    }

    static func renameLedger(_ ledger: LedgerID, name: String) -> Query {
        "UPDATE ledgers SET name = \(name), updated_at = now() WHERE id = \(ledger)"
    }

    /// Deletes a ledger with everything in it: its data, memberships, pinned tokens and change feed
    /// (`delete_ledger`, migrations/0017, which holds the sequencer's lock while it goes).
    static func deleteLedger(_ ledger: LedgerID) -> Query {
        "SELECT delete_ledger(\(ledger))"
    }

    /// A member as the members routes answer it, from `memberships m` joined to `users u`.
    static let memberColumns: Query = SQLFragments.jsonObject(
        columns: """
            u.id AS "userId", u.name, m.role, \(createdAt("m"))
            """)

    /// `<alias>.created_at` as the answers write times, named `createdAt`.
    private static func createdAt(_ alias: Query) -> Query {
        "\(SQLFragments.timestamp("\(alias).created_at")) AS \"createdAt\""
    }

    static func members(_ ledger: LedgerID) -> Query {
        """
        SELECT \(SQLFragments.jsonArray(of: memberColumns, orderBy: "u.id"))
        FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.ledger_id = \(ledger)
        """
    }

    static func member(_ ledger: LedgerID, user: Int64) -> Query {
        """
        SELECT \(memberColumns)
        FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.ledger_id = \(ledger) AND m.user_id = \(user)
        """
    }

    static func userExists(_ user: Int64) -> Query { "SELECT 1 FROM users WHERE id = \(user)" }

    /// Adds or changes a membership; answers whether the row is new (xmax = 0 for an insert).
    static func putMember(_ ledger: LedgerID, user: Int64, role: MemberRole) -> Query {
        """
        INSERT INTO memberships (ledger_id, user_id, role) VALUES (\(ledger), \(user), \(role.rawValue))
        ON CONFLICT (ledger_id, user_id) DO UPDATE SET role = EXCLUDED.role
        RETURNING (xmax = 0)
        """
    }

    static func deleteMember(_ ledger: LedgerID, user: Int64) -> Query {
        "DELETE FROM memberships WHERE ledger_id = \(ledger) AND user_id = \(user)"
    }

    /// Makes the deferred owner check run now, so its 409 comes from the statement, not the commit.
    static let checkOwnersNow: Query = "SET CONSTRAINTS memberships_keep_an_owner IMMEDIATE"
}
