@testable import BudgetAPI
import Postgres
import TestSupport

/// A fresh database seeded with plain SQL, on which list plans run for real.
struct ListingDatabase: Sendable {
    let url: String

    /// What one list statement answered: the total and the ids of the page, as text (`1`, `"4"`).
    struct Answer: Sendable, Equatable {
        var total: Int
        var ids: [String]
    }

    /// Where a list reads from: the FROM list, the row scope, the element JSON and the default order.
    struct Source: Sendable {
        var from: String
        var scope: Query
        var element: String
        var tieBreak: String

        static func documents(_ collection: String) -> Source {
            Source(from: "documents d", scope: "d.collection = \(collection)", element: "d.body", tieBreak: "d.position")
        }

        static let transactions = Source(
            from: "transactions t", scope: "TRUE", element: TransactionQueries.json(expandingCategory: false), tieBreak: "t.id")

        static let categories = Source(
            from: """
                categories c CROSS JOIN LATERAL \
                (SELECT coalesce(sum(t.amount), 0.00) AS spent FROM transactions t WHERE t.category_id = c.id) b
                """,
            scope: "TRUE", element: CategoryQueries.json(embeddingTransactions: false), tieBreak: "c.id")
    }

    static func make(seed: String) async throws -> ListingDatabase {
        let url = try await TestDatabase.fresh()
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            try connection.execute(script: seed)
        }
        return ListingDatabase(url: url)
    }

    /// Plans `query` against `catalog` and runs the page statement; a database error is thrown as it came.
    func list(_ query: String, catalog: some FieldCatalog, source: Source) async throws -> Answer {
        let statement = try ListPlan(try parseList(query), catalog: catalog)
            .selectPage(element: source.element, from: source.from, scope: source.scope, tieBreak: source.tieBreak)
        let (total, json) = try await runOffCooperativePool { [url] in
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            let row = try connection.query(statement)[0]
            return (try row.decode(Int.self, at: 0), row.bytes(at: 1) ?? [])
        }
        guard case .array(let records) = try JSONParser.parse(json) else { return Answer(total: total, ids: ["not an array"]) }
        let ids = records.map { record -> String in
            guard case .object(let members) = record, let id = members["id"] else { return "?" }
            return JSONWriter.string(id)
        }
        return Answer(total: total, ids: ids)
    }

    /// The ids a generic list of `collection` answers.
    func documents(_ query: String, in collection: String = "posts") async throws -> [String] {
        try await list(query, catalog: DocumentCatalog(column: "d.doc"), source: .documents(collection)).ids
    }

    func scalar(_ sql: String) async throws -> String? {
        try await runOffCooperativePool { [url] in
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            return try connection.query(Query(unsafeSQL: sql))[0].column(0)
        }
    }
}
