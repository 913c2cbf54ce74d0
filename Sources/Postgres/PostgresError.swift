/// An error from the database layer: a server error with its diagnostic fields, or a client-side failure.
///
/// `description` is redacted ("database error …" with the kind and SQLSTATE only) because server messages
/// can quote the offending values; `debugDescription` has every field and the SQL, for logs.
public struct PostgresError: Error, CustomStringConvertible, CustomDebugStringConvertible, Sendable {
    /// What went wrong, in broad strokes; a closed set.
    public enum Kind: Sendable, Hashable {
        /// The server rejected a statement; `sqlState` says why.
        case server
        /// A connection could not be opened.
        case connectionFailed
        /// An open connection broke (backend terminated, socket closed).
        case connectionLost
        /// No pooled connection became free within the checkout timeout.
        case poolTimeout
        /// The pool was shut down before the job could run.
        case poolClosed
        /// A column's text could not be turned into the requested Swift type.
        case decoding
        /// libpq returned something this wrapper did not expect.
        case protocolViolation
    }

    public var kind: Kind
    public var sqlState: SQLState?
    public var constraint: String?
    public var table: String?
    public var column: String?
    public var schema: String?
    public var message: String?
    public var detail: String?
    public var hint: String?
    /// The statement that failed, with `$n` placeholders (never the bound values).
    public var sql: String?

    public init(kind: Kind, sqlState: SQLState? = nil, message: String? = nil, detail: String? = nil, sql: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.sql = sql
    }

    /// True when the database could not be reached or the connection broke, so an API should answer 503.
    public var isConnectionProblem: Bool {
        switch kind {
        case .connectionFailed, .connectionLost, .poolTimeout, .poolClosed:
            return true
        case .server, .decoding, .protocolViolation:
            guard let sqlState else { return false }
            // Class 08 is connection exception; 57P01–57P03 mean the server is shutting down or starting.
            return sqlState.errorClass == "08"
                || [SQLState.adminShutdown, .crashShutdown, .cannotConnectNow].contains(sqlState)
        }
    }

    public var description: String {
        var text = "database error: \(kind)"
        if let sqlState { text += " (SQLSTATE \(sqlState.rawValue))" }
        return text
    }

    public var debugDescription: String {
        var fields = ["kind: \(kind)"]
        let optional: [(String, String?)] = [
            ("sqlState", sqlState?.rawValue), ("message", message), ("detail", detail), ("hint", hint),
            ("schema", schema), ("table", table), ("column", column), ("constraint", constraint), ("sql", sql),
        ]
        for case let (name, value?) in optional {
            fields.append("\(name): \(String(reflecting: value))")
        }
        return "PostgresError(" + fields.joined(separator: ", ") + ")"
    }

    /// A decoding failure; the offending text goes to `detail`, which only `debugDescription` shows.
    static func decoding(_ problem: String, text: String, type: String) -> PostgresError {
        PostgresError(kind: .decoding, message: "cannot decode \(type): \(problem)", detail: "text: \(text)")
    }
}
