import Postgres
import TestSupport

/// The one-table database the transaction and pipeline tests write to: `items`, a unique `name` each.
enum ItemsTable {
    /// A connection to a fresh database holding an empty `items` table.
    static func connection() async throws -> Connection {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        try connection.execute("CREATE TABLE items (name text CONSTRAINT items_name_unique UNIQUE)")
        return connection
    }

    /// The names in `items`, in order.
    static func names(_ connection: Connection) throws -> [String] {
        try connection.query("SELECT name FROM items ORDER BY name").map { try $0.decode(String.self, at: 0) }
    }
}
