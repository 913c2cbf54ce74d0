@testable import BudgetAPI
import Foundation
import HTTPServer
import Postgres
import Testing

/// bench/sql/*.sql must run exactly the SQL of the routes they stand for (issue #5: pgbench "running the same
/// SQL as that endpoint"), so a change to a route's query fails here until the bench script follows it.
@Suite struct BenchSQLTests {
    static let benchSQL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("bench/sql")

    /// The id the pgbench scripts draw at random (`\set id random(1, 200)`), as the routes bind it.
    static let id: Int64 = 424_242

    static func listRequest() throws -> ListAnswer {
        try ListAnswer(request: Request(method: .get, target: "/categories/\(id)/transactions"), source: Transactions.plainSource(in: .first))
    }

    /// Each script's statements, rendered from the routes' own queries.
    static func expectedStatements() throws -> [String: [Query]] {
        let list = try listRequest()
        let monthRequest = Request(method: .get, target: "/categories?month=current")
        let monthSource = try Categories.listSource(for: monthRequest, context: RecordContext(clock: CivilClock(), ledger: .first))
        let monthList = try ListAnswer(request: monthRequest, source: monthSource)
        return [
            "categories-month": [
                monthList.probe(
                    monthSource.shape.record,
                    ListTarget(
                        element: monthSource.element, source: monthSource.from, scope: monthSource.scope, ledger: .first,
                        tieBreak: monthSource.tieBreak)
                ).statement
            ],
            "month": [MonthQueries.month(MonthChoice.current.sql(CivilClock()), in: .first)],
            "category": [
                SnapshotJSON.statement(
                    try Categories.find(id: id, for: Request(method: .get, target: "/"), context: RecordContext(clock: CivilClock(), ledger: .first)),
                    ledger: .first)
            ],
            "transactions": [
                list.probe(
                    Transactions.shape.record.selectingNull(CategoryChildRoutes<Transactions>.owner.nullMembers),
                    ListTarget(
                        element: Transactions.plainSource(in: .first).element, source: Transactions.plainSource(in: .first).from,
                        scope: "\(Transactions.plainSource(in: .first).scope) AND (t.category_id = \(id))", ledger: .first,
                        tieBreak: Transactions.plainSource(in: .first).tieBreak,
                        owner: ListOwner(
                            exists: CategoryQueries.exists(id: id, in: .first), missing: APIError.notFound(resource: "category", id: id),
                            isImpliedByRows: true)
                    )
                ).statement
            ],
            "post": [
                TransactionQueries.insert(
                    try TransactionFields(
                        ["title": .string("bench"), "amount": .number("12.50")], mode: .complete,
                        categoryIDFromPath: id, fieldPrefix: ""), today: CivilClock().today, in: .first)
            ],
        ]
    }

    /// A query as pgbench runs it: the route's id as `:id`, other values inline, and the colons of the
    /// timestamp format escaped so pgbench does not read `:MI` as a variable.
    static func pgbenchText(_ query: Query) -> String {
        var text = query.sql
        for (index, value) in query.bindings.enumerated().reversed() {
            let literal: String
            switch value {
            case String(id)?: literal = ":id"
            case let value?: literal = "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
            case nil: literal = "NULL"
            }
            text = text.replacingOccurrences(of: "$\(index + 1)", with: literal)
        }
        return
            text
            .replacingOccurrences(of: "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'", with: "U&'YYYY-MM-DD\"T\"HH24\\003AMI\\003ASS\"Z\"'")
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    @Test(arguments: ["category", "transactions", "post", "categories-month", "month"])
    func benchScriptRunsTheRoutesSQL(name: String) throws {
        let file = try String(contentsOf: Self.benchSQL.appendingPathComponent("\(name).sql"), encoding: .utf8)
        let statements = file.split(separator: "\n").filter { !$0.hasPrefix("--") && !$0.hasPrefix("\\") && !$0.isEmpty }
            .map { String($0) }
        let expected = try #require(try Self.expectedStatements()[name]).map { Self.pgbenchText($0) + ";" }
        #expect(statements == expected, "bench/sql/\(name).sql is stale; its statements should read:\n\(expected.joined(separator: "\n"))")
    }
}
