import Postgres
import TestSupport
import Testing

@Suite("Transactions")
struct TransactionTests {
    private struct Abort: Error {}

    private func connection() async throws -> Connection {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        try connection.execute("CREATE TABLE items (name text CONSTRAINT items_name_unique UNIQUE)")
        return connection
    }

    private func names(_ connection: Connection) throws -> [String] {
        try connection.query("SELECT name FROM items ORDER BY name").map { try $0.decode(String.self, at: 0) }
    }

    @Test func commitsWhenTheBodyReturns() async throws {
        let connection = try await connection()
        let value = try connection.transaction { connection in
            try connection.execute("INSERT INTO items VALUES (\("a"))")
            return 7
        }
        #expect(value == 7)
        #expect(try names(connection) == ["a"])
        #expect(!connection.isInTransaction)
    }

    @Test func rollsBackOnAThrownError() async throws {
        let connection = try await connection()
        #expect(throws: Abort.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("a"))")
                throw Abort()
            }
        }
        #expect(try names(connection).isEmpty)
        #expect(!connection.isInTransaction)
    }

    @Test func rollsBackOnADatabaseError() async throws {
        let connection = try await connection()
        #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("a"))")
                try connection.execute("INSERT INTO items VALUES (\("a"))")
            }
        }
        #expect(try names(connection).isEmpty)
    }

    @Test func swallowedDatabaseErrorDoesNotPassAsACommit() async throws {
        let connection = try await connection()
        #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("a"))")
                _ = try? connection.execute("SELECT 1/0")
            }
        }
        #expect(try names(connection).isEmpty)
    }

    @Test func nestedTransactionUndoesOnlyTheInnerWork() async throws {
        let connection = try await connection()
        try connection.transaction { connection in
            try connection.execute("INSERT INTO items VALUES (\("outer"))")
            _ = try? connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("inner"))")
                throw Abort()
            }
        }
        #expect(try names(connection) == ["outer"])
    }
}
