/// A five-character SQLSTATE code; an open set with names for the codes this program reacts to.
public struct SQLState: Hashable, Sendable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    /// The first two characters, e.g. `23` for every integrity constraint violation.
    public var errorClass: Substring { rawValue.prefix(2) }

    public var description: String { rawValue }

    public static let uniqueViolation: SQLState = "23505"
    public static let foreignKeyViolation: SQLState = "23503"
    public static let checkViolation: SQLState = "23514"
    public static let notNullViolation: SQLState = "23502"
    public static let exclusionViolation: SQLState = "23P01"
    public static let invalidTextRepresentation: SQLState = "22P02"
    public static let numericValueOutOfRange: SQLState = "22003"
    public static let invalidDatetimeFormat: SQLState = "22007"
    public static let datetimeFieldOverflow: SQLState = "22008"
    public static let invalidRegularExpression: SQLState = "2201B"
    public static let stringDataRightTruncation: SQLState = "22001"
    /// `nextval` past a sequence's maximum.
    public static let sequenceGeneratorLimitExceeded: SQLState = "2200H"
    /// A byte that text in the database's encoding cannot hold, such as NUL.
    public static let characterNotInRepertoire: SQLState = "22021"
    /// `\u0000` in a JSON string that jsonb would have to store as text.
    public static let untranslatableCharacter: SQLState = "22P05"
    public static let serializationFailure: SQLState = "40001"
    public static let deadlockDetected: SQLState = "40P01"
    public static let lockNotAvailable: SQLState = "55P03"
    public static let queryCanceled: SQLState = "57014"
    public static let adminShutdown: SQLState = "57P01"
    public static let crashShutdown: SQLState = "57P02"
    public static let cannotConnectNow: SQLState = "57P03"
    public static let undefinedTable: SQLState = "42P01"
    public static let undefinedColumn: SQLState = "42703"
    public static let syntaxError: SQLState = "42601"
    public static let duplicateDatabase: SQLState = "42P04"
    /// Also raised as "cached plan must not change result type" when a table changed under a prepared statement.
    public static let featureNotSupported: SQLState = "0A000"
    public static let invalidStatementName: SQLState = "26000"
}
