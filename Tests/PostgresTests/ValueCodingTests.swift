import Postgres
import TestSupport
import Testing

@Suite("Values: exact parsing and round trips through PostgreSQL")
struct ValueCodingTests {
    @Test func datesAndTimestampsParseAndRender() throws {
        #expect(PostgresDate("2024-02-29")?.description == "2024-02-29")
        #expect(PostgresDate("2023-02-29") == nil)
        #expect(PostgresDate("2024-2-29") == nil)
        #expect(PostgresDate(daysSinceEpoch: 0).description == "1970-01-01")
        let instant = try #require(Timestamp("2026-11-21 08:00:00.5+00"))
        #expect(instant.iso8601 == "2026-11-21T08:00:00.500Z")
        #expect(Timestamp("2026-11-21T10:30:00+02:30")?.iso8601 == "2026-11-21T08:00:00.000Z")
        #expect(Timestamp("1969-12-31T23:59:59.999999Z")?.microsecondsSinceEpoch == -1)
        #expect(Timestamp("1969-12-31T23:59:59.999999Z")?.postgresText == "1969-12-31T23:59:59.999999Z")
        #expect(Timestamp("2026-11-21T08:00:00") == nil)
    }

    @Test func roundTripsAreExact() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        // numeric's text comes back digit for digit (money is `Money` in BudgetCore, read from this text).
        let amount = "123456789012.34", tiny = "-0.01", many = "98765432109876543210.0123456789"
        let date = try #require(PostgresDate("2026-11-21"))
        let instant = try #require(Timestamp("2026-11-21T08:00:00.123456Z"))
        let text = "Café ☕️ 'quoted' \"double\" \\ back; ünïcödé 𝄞"
        let missing: Int? = nil
        let row = try connection.query(
            """
            SELECT \(amount)::numeric(14,2), \(tiny)::numeric, \(many)::numeric, \(date)::date,
                   \(instant)::timestamptz, \(missing)::int, \(true)::bool, \(false)::bool, \(text)::text,
                   \(Int64.max)::int8, '2026-11-21 10:00:00+02'::timestamptz
            """)[0]
        #expect(try row.decode(String.self, at: 0) == amount)
        #expect(try row.decode(String.self, at: 1) == tiny)
        #expect(try row.decode(String.self, at: 2) == many)
        #expect(try row.decode(PostgresDate.self, at: 3) == date)
        #expect(try row.decode(Timestamp.self, at: 4) == instant)
        #expect(try row.decode(Int?.self, at: 5) == nil)
        #expect(row.column(5) == nil)
        #expect(throws: PostgresError.self) { try row.decode(Int.self, at: 5) }
        #expect(try row.decode(Bool.self, at: 6) == true)
        #expect(try row.decode(Bool.self, at: 7) == false)
        #expect(try row.decode(String.self, at: 8) == text)
        #expect(row.bytes(at: 8) == Array(text.utf8))
        #expect(try row.decode(Int64.self, at: 9) == .max)
        // The session runs in UTC with ISO output, whatever the server's default.
        #expect(row.column(10) == "2026-11-21 08:00:00+00")
    }

    /// Array elements keep every quote and backslash, also where one forms a single Character with what
    /// follows it (an emoji modifier, a combining mark), as a JSON body's member names can.
    @Test func textArraysKeepQuotesThatStartAGraphemeCluster() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        defer { connection.close() }
        let elements = [#"{"🏻":null}"#, "\"\u{301}", "\\\u{301}", "a,b", "NULL", "}{"]
        let result = try connection.query("SELECT unnest(\(elements)::text[])")
        #expect(try result.map { try $0.decode(String.self, at: 0) } == elements)
    }

    @Test func decodingByNameIsExactAndResultsKnowTheirShape() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        let result = try connection.query("SELECT 1 AS \"createdAt\", 'a' AS title UNION ALL SELECT 2, 'b'")
        #expect(result.columnNames == ["createdAt", "title"])
        #expect(result.count == 2)
        #expect(try result.map { try $0.decode(Int.self, named: "createdAt") } == [1, 2])
        #expect(throws: PostgresError.self) { try result[0].decode(Int.self, named: "createdat") }
        #expect(throws: PostgresError.self) { try result[0].decode(Int.self, named: "title") }
    }

    @Test func preparedStatementsAreReusedAcrossCalls() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        for value in 0..<5 {
            _ = try connection.query("SELECT \(value)::int")
        }
        let prepared = try connection.query("SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT $1::int'")
        #expect(try prepared[0].decode(Int.self, at: 0) == 1)
    }

    @Test func cachedStatementSurvivesASchemaChange() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        try connection.execute(script: "CREATE TABLE shifting (a int); INSERT INTO shifting VALUES (1);")
        #expect(try connection.query("SELECT * FROM shifting WHERE a = \(1)").columnNames == ["a"])
        try connection.execute(script: "ALTER TABLE shifting ADD COLUMN b text;")
        #expect(try connection.query("SELECT * FROM shifting WHERE a = \(1)").columnNames == ["a", "b"])
    }
}
