import HTTPServer
import Postgres

/// A relational resource served over the REST conventions of docs/api.md: the SQL and validation that differ
/// between categories and transactions, so that `RecordRoutes` can hold the HTTP logic once.
protocol TypedResource: Sendable {
    associatedtype Fields: Sendable

    /// The collection's path segment, e.g. `categories`.
    static var collection: String { get }
    /// The record's name in messages, e.g. `category`.
    static var recordName: String { get }

    /// Validates a body object; `fieldPrefix` names the record within an array body.
    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> Fields
    static func id(of fields: Fields) -> Int64?

    /// The fields lists may filter and sort on, over the aliases of `listSource`.
    static var catalog: ColumnCatalog { get }
    /// The FROM list that `listElement` and `catalog` refer to, e.g. `transactions t`.
    static var listSource: Query { get }
    /// The default order of lists, which also breaks ties of `_sort`, e.g. `t.id`.
    static var defaultOrder: Query { get }
    /// One record as plain columns over `listSource` and the aliases of write answers, rendered in Swift.
    static var record: PlainRecord { get }
    /// What a list answers per record: `record`, or JSON rendered in SQL when `_embed`/`_expand` asks for more.
    static func listElement(for request: Request) throws -> ListElement
    /// Reads one record the way `listElement` lists it.
    static func find(id: Int64, for request: Request) throws -> RecordRead
    /// Write queries answer one row (id, created, `record` columns) or none when the record does not exist.
    static func insert(_ fields: Fields) -> Query
    static func replace(id: Int64, with fields: Fields) -> Query
    static func update(id: Int64, with fields: Fields) -> Query
    static func delete(id: Int64) -> Query
}

/// How much of a record a write body must carry.
enum WriteMode: Sendable {
    /// POST and PUT: the whole record, so every required field must be present.
    case complete
    /// PATCH: only the fields present change (RFC 7396 merge, shallow).
    case partial
}

/// What a write query answers: the record's id, whether it was created, and its JSON.
struct WrittenRecord: Sendable {
    let id: Int64
    let isCreated: Bool
    let json: [UInt8]
}

extension Database {
    /// Runs one write statement of a `TypedResource` on its own: a single statement is atomic without
    /// BEGIN/COMMIT, which would cost two more round trips.
    func write(_ query: Query, rendering record: PlainRecord) async throws -> WrittenRecord? {
        try WrittenRecord(await self.query(query), rendering: record)
    }
}

extension WrittenRecord {
    /// The first row of a `TypedResource` write, its columns from the third on rendered by `record`; nil when
    /// it touched no row.
    init?(_ result: QueryResult, rendering record: PlainRecord) throws {
        guard result.count > 0 else { return nil }
        let row = result[0]
        self.init(id: try row.decode(Int64.self, at: 0), isCreated: try row.decode(Bool.self, at: 1), json: record.json(row, from: 2))
    }
}

extension Connection {
    /// Runs a write query of a `TypedResource`; nil when it touched no row.
    func write(_ query: Query, rendering record: PlainRecord) throws -> WrittenRecord? {
        try WrittenRecord(self.query(query), rendering: record)
    }
}
