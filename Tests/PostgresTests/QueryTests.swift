import Postgres
import TestSupport
import Testing

@Suite("Query building")
struct QueryTests {
    @Test func interpolatedValuesBecomeNumberedPlaceholders() {
        let id = 42
        let title: String? = nil
        let query: Query = "SELECT * FROM categories WHERE id = \(id) AND title = \(title) AND active = \(true)"
        #expect(query.sql == "SELECT * FROM categories WHERE id = $1 AND title = $2 AND active = $3")
        #expect(query.bindings == ["42", nil, "true"])
    }

    @Test func compositionRenumbersTheRightHandSide() {
        var query: Query = "SELECT * FROM t WHERE a = \(1)"
        query.append(" AND b = \("x") AND c = \(3)")
        let filter: Query = "d = \("1.50")"
        let combined = query + " AND " + filter
        #expect(combined.sql == "SELECT * FROM t WHERE a = $1 AND b = $2 AND c = $3 AND d = $4")
        #expect(combined.bindings == ["1", "x", "3", "1.50"])
    }

    @Test func subqueryInterpolationSplicesAndRenumbers() {
        let inner: Query = "SELECT id FROM t WHERE x = \(7)"
        let outer: Query = "SELECT \(1), * FROM (\(inner)) AS s WHERE y = \(8)"
        #expect(outer.sql == "SELECT $1, * FROM (SELECT id FROM t WHERE x = $2) AS s WHERE y = $3")
        #expect(outer.bindings == ["1", "7", "8"])
    }

    @Test func joinedPutsTheSeparatorBetweenParts() {
        let parts: [Query] = ["a = \(1)", "b = \(2)", "c IS NULL"]
        let joined = Query.joined(parts, separator: " AND ")
        #expect(joined.sql == "a = $1 AND b = $2 AND c IS NULL")
        #expect(Query.joined([], separator: ", ").sql == "")
        let bound = Query.joined(["a", "b"], separator: " || \("-") || ")
        #expect(bound.sql == "a || $1 || b")
        #expect(bound.bindings == ["-"])
    }

    @Test func identifiersAreQuotedWithTheirQuotesDoubled() {
        #expect(Query(identifier: "createdAt").sql == #""createdAt""#)
        #expect(Query(identifier: #"a"b"#).sql == #""a""b""#)
        // A combining mark after the quote makes one Character; the quote is still doubled.
        #expect(Query(identifier: "\"\u{301}").sql == "\"\"\"\u{301}\"")
        #expect(Query(identifier: "x").bindings.isEmpty)
    }

    /// Checked identifiers stand unquoted; anything that could end the name or start other SQL is not one.
    @Test func plainIdentifiersAndLiteralIntegersStandAsTheyAre() {
        for name in ["t", "transactions", "typed_12", "_x", String(repeating: "a", count: 63)] {
            #expect(SQLIdentifier.isPlain(name), "\(name)")
        }
        for name in ["", "T", "1t", "t.id", "t id", "t;", "t\"", "a-b", "é", String(repeating: "a", count: 64)] {
            #expect(!SQLIdentifier.isPlain(name), "\(name)")
        }
        let alias: SQLIdentifier = "t"
        let query: Query = "SELECT \(alias).id FROM transactions \(alias) WHERE \(alias).id = \(7) FETCH \(literal: 64)"
        #expect(query.sql == "SELECT t.id FROM transactions t WHERE t.id = $1 FETCH 64")
        #expect(query.bindings == ["7"])
    }

    @Test func unsafeSQLIsInsertedVerbatim() {
        let column = "created_at"
        let query: Query = "SELECT * FROM t ORDER BY \(unsafeSQL: column) DESC LIMIT \(10)"
        #expect(query.sql == "SELECT * FROM t ORDER BY created_at DESC LIMIT $1")
        #expect(Query(unsafeSQL: "SELECT 1").sql == "SELECT 1")
        #expect(Query(unsafeSQL: "SELECT 1").bindings.isEmpty)
    }

    @Test func descriptionLeavesBoundValuesOut() {
        let query: Query = "SELECT \("secret")"
        #expect(!query.description.contains("secret"))
        #expect(query.debugDescription.contains("secret"))
    }

    @Test func arraysAreSentAsQuotedArrayLiterals() {
        #expect(["a", "b,c", "q\"uote", "NULL"].postgresText == #"{"a","b,c","q\"uote","NULL"}"#)
    }

    @Test func injectionStringIsBoundNotExecuted() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        try connection.execute("CREATE TABLE notes (body text NOT NULL)")
        let hostile = "x'); DROP TABLE notes; --"
        try connection.execute("INSERT INTO notes (body) VALUES (\(hostile))")
        let rows = try connection.query("SELECT body FROM notes WHERE body = \(hostile)")
        #expect(rows.count == 1)
        #expect(try rows[0].decode(String.self, at: 0) == hostile)
        let ids = try connection.query("SELECT count(*) FROM notes WHERE body = ANY(\([hostile, "other"]))")
        #expect(try ids[0].decode(Int.self, at: 0) == 1)
    }
}
