import Postgres

/// A ledger: one household's budget, the key that leads every table of budget data (docs/households.md).
///
/// A type of its own, not an `Int64`, so that a ledger is never passed where a record id is meant, nor the
/// other way round; it binds as a `bigint` parameter like any integer.
public struct LedgerID: Hashable, Sendable, CustomStringConvertible, PostgresEncodable, PostgresDecodable {
    public let value: Int64

    /// The data the server held before households, and the one ledger of a server without users.
    public static let first = LedgerID(1)

    public init(_ value: Int64) {
        self.value = value
    }

    public init(postgresText: String) throws {
        value = try Int64(postgresText: postgresText)
    }

    public var postgresText: String { value.postgresText }
    public var description: String { String(value) }
}
