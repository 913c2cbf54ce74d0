import Postgres
import TestSupport
import Testing

@Suite("PostgresError carries the server's diagnostic fields")
struct PostgresErrorTests {
    private static let schema = """
        CREATE TABLE parents (
            id int CONSTRAINT parents_pkey PRIMARY KEY,
            title text NOT NULL CONSTRAINT parents_title_unique UNIQUE,
            amount numeric CONSTRAINT parents_amount_positive CHECK (amount > 0)
        );
        CREATE TABLE children (
            id int PRIMARY KEY,
            parent_id int CONSTRAINT children_parent_fk REFERENCES parents (id)
        );
        INSERT INTO parents VALUES (1, 'secret-title', 5);
        """

    private func connection() async throws -> Connection {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        try connection.execute(script: Self.schema)
        return connection
    }

    private func failure(_ connection: Connection, _ query: Query) throws -> PostgresError {
        do {
            try connection.execute(query)
        } catch let error as PostgresError {
            return error
        }
        Issue.record("expected \(query.sql) to fail")
        return PostgresError(kind: .protocolViolation)
    }

    @Test func uniqueViolation() async throws {
        let error = try failure(try await connection(), "INSERT INTO parents VALUES (2, \("secret-title"), 1)")
        #expect(error.kind == .server)
        #expect(error.sqlState == .uniqueViolation)
        #expect(error.constraint == "parents_title_unique")
        #expect(error.table == "parents")
        #expect(error.sql == "INSERT INTO parents VALUES (2, $1, 1)")
        #expect(!error.isConnectionProblem)
        // Redacted for clients; complete for logs.
        #expect(!error.description.contains("secret-title"))
        #expect(error.description.hasPrefix("database error"))
        #expect(error.debugDescription.contains("secret-title"))
        #expect(error.debugDescription.contains("parents_title_unique"))
    }

    @Test func foreignKeyViolation() async throws {
        let error = try failure(try await connection(), "INSERT INTO children VALUES (1, \(999))")
        #expect(error.sqlState == .foreignKeyViolation)
        #expect(error.constraint == "children_parent_fk")
        #expect(error.table == "children")
        #expect(error.detail?.contains("999") == true)
        #expect(!error.description.contains("999"))
    }

    @Test func checkViolation() async throws {
        let error = try failure(try await connection(), "UPDATE parents SET amount = \("-12.34")")
        #expect(error.sqlState == .checkViolation)
        #expect(error.constraint == "parents_amount_positive")
        #expect(error.table == "parents")
        #expect(!error.description.contains("-12.34"))
    }

    @Test func notNullViolationNamesTheColumn() async throws {
        let title: String? = nil
        let error = try failure(try await connection(), "INSERT INTO parents VALUES (3, \(title), 1)")
        #expect(error.sqlState == .notNullViolation)
        #expect(error.table == "parents")
        #expect(error.column == "title")
    }

    @Test func invalidInputIsAServerErrorWithoutTheValueInDescription() async throws {
        let error = try failure(try await connection(), "SELECT \("not-a-number")::int")
        #expect(error.sqlState == .invalidTextRepresentation)
        #expect(!error.description.contains("not-a-number"))
        #expect(error.message?.contains("not-a-number") == true)
    }

    @Test func failedConnectIsAConnectionProblem() throws {
        #expect {
            try Connection.connect(to: "postgresql:///postgres?host=/nonexistent-socket-dir&user=postgres")
        } throws: { error in
            (error as? PostgresError)?.kind == .connectionFailed && (error as? PostgresError)?.isConnectionProblem == true
        }
    }
}
