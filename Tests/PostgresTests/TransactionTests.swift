import Postgres
import TestSupport
import Testing

@Suite("Transactions")
struct TransactionTests {
    private struct Abort: Error {}

    @Test func commitsWhenTheBodyReturns() async throws {
        let connection = try await ItemsTable.connection()
        let value = try connection.transaction { connection in
            try connection.execute("INSERT INTO items VALUES (\("a"))")
            return 7
        }
        #expect(value == 7)
        #expect(try ItemsTable.names(connection) == ["a"])
        #expect(!connection.isInTransaction)
    }

    @Test func rollsBackOnAThrownError() async throws {
        let connection = try await ItemsTable.connection()
        #expect(throws: Abort.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("a"))")
                throw Abort()
            }
        }
        #expect(try ItemsTable.names(connection).isEmpty)
        #expect(!connection.isInTransaction)
    }

    @Test func rollsBackOnADatabaseError() async throws {
        let connection = try await ItemsTable.connection()
        #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("a"))")
                try connection.execute("INSERT INTO items VALUES (\("a"))")
            }
        }
        #expect(try ItemsTable.names(connection).isEmpty)
    }

    @Test func swallowedDatabaseErrorDoesNotPassAsACommit() async throws {
        let connection = try await ItemsTable.connection()
        #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("a"))")
                _ = try? connection.execute("SELECT 1/0")
            }
        }
        #expect(try ItemsTable.names(connection).isEmpty)
    }

    @Test func nestedTransactionUndoesOnlyTheInnerWork() async throws {
        let connection = try await ItemsTable.connection()
        try connection.transaction { connection in
            try connection.execute("INSERT INTO items VALUES (\("outer"))")
            _ = try? connection.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (\("inner"))")
                throw Abort()
            }
        }
        #expect(try ItemsTable.names(connection) == ["outer"])
    }
}
