import BudgetCore
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

    /// Where a list reads from: the FROM list, the row scope, what each record answers and the default order.
    struct Source: Sendable {
        var from: Query
        var scope: Query
        var element: ListElement
        var tieBreak: Query

        static func documents(_ collection: String) -> Source {
            Source(from: "documents d", scope: "d.collection = \(collection)", element: .rendered("d.body"), tieBreak: "d.position")
        }

        static let transactions = typed(Transactions.self)
        static let categories = typed(Categories.self)

        /// A typed resource's list, from its own source and order (as `RecordRoutes` passes them to `Database.list`).
        private static func typed<Resource: TypedResource>(_: Resource.Type) -> Source {
            let source = Resource.plainSource(in: .first)
            return Source(from: source.from, scope: source.scope, element: source.element, tieBreak: source.tieBreak)
        }
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
        let plan = try ListPlan(try parseList(query), catalog: catalog)
        let (total, json) = try await runOffCooperativePool { [url] in
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            switch source.element {
            case .plain(let record):
                let result = try connection.query(
                    plan.selectRows(columns: record.columns, from: source.from, scope: source.scope, tieBreak: source.tieBreak, ledger: .first))
                return (try result[0].decode(Int.self, at: 0), record.jsonArray(result, from: 3))
            case .rendered(let element):
                // As the routes read a rendered list: the header, then a cursor over the rows, in one snapshot.
                return try connection.transaction(isolation: .repeatableRead) { connection in
                    let total = try connection.query(plan.selectHeader(from: source.from, scope: source.scope, ledger: .first))[0].decode(
                        Int.self, at: 0)
                    let rows = plan.selectCursorRows(
                        columns: "(\(element))::text", from: source.from, scope: source.scope, tieBreak: source.tieBreak,
                        offset: plan.offset(total: total))
                    let records = ListRows(
                        cursor: try Cursor("budget_list", for: rows, on: connection), element: source.element,
                        opening: [UInt8(ascii: "[")], closing: [UInt8(ascii: "]")])
                    var json: [UInt8] = []
                    while let piece = try records.next(on: connection) { json += piece }
                    return (total, json)
                }
            }
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
        try await list(query, catalog: DocumentCatalog(column: "d.doc", collection: collection, ledger: .first), source: .documents(collection)).ids
    }

    func scalar(_ sql: String) async throws -> String? {
        try await runOffCooperativePool { [url] in
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            return try connection.query(Query(unsafeSQL: sql))[0].column(0)
        }
    }
}
