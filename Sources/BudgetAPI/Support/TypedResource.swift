import BudgetCore
import HTTPServer
import Postgres

/// A relational resource served over the REST conventions of docs/api.md, declared once: its members, its
/// SQL and its validation, so that `RecordRoutes` holds the HTTP logic once and everything that lists the
/// typed resources (the change feed, the home page, seed, export, reserved names) iterates over
/// `TypedResources.all` instead of naming them (docs/architecture.md, Adding a typed resource).
protocol TypedResource: Sendable {
    associatedtype Fields: Sendable

    /// The collection's path segment and its table's name, e.g. `categories`: the change log names a typed
    /// record's collection after its table (the capture triggers of migrations/0013).
    static var collection: String { get }
    /// The record's name in messages, e.g. `category`.
    static var recordName: String { get }
    /// The record's members in their JSON order, each declared once, with how writes set their columns.
    static var members: RecordMembers<Fields> { get }
    /// `members`' record: by default theirs.
    static var shape: RecordShape { get }
    /// The alias the members' SQL gives the resource's own row, e.g. `t`; a write's CTE has the same name.
    /// By default `members`'.
    static var alias: SQLIdentifier { get }
    /// The constraints of the resource's table a client's write can break, and what each answers
    /// (`DatabaseErrors.swift` reads them through `TypedResources.constraint(named:)`); the registry adds
    /// the primary key's.
    static var constraints: [ResourceConstraint] { get }
    /// What the derived members join to a row `alias` (a category's balance); empty by default.
    static var joins: Query { get }

    /// Validates a body object; `fieldPrefix` names the record within an array body.
    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> Fields
    static func id(of fields: Fields) -> Int64?

    /// What a list answers for `request`: by default `shape`'s record over `source`, in the context's ledger.
    static func listSource(for request: Request, context: RecordContext) throws -> ListSource
    /// What its lists answer in, JSON first (docs/api.md, CSV): JSON alone by default.
    static var listFormats: [ListFormat] { get }
    /// What a list answers as CSV, when `listFormats` offers it: by default `listSource`'s records. Its
    /// `shape` is what the query language filters and sorts on, so keep it the JSON list's.
    static func csvListSource(for request: Request, context: RecordContext) throws -> ListSource
    /// Reads one record the way `listSource` lists it.
    static func find(id: Int64, for request: Request, context: RecordContext) throws -> RecordRead
    /// Write queries answer one row (id, created, `record` columns) or none when the record does not exist
    /// in the context's ledger; the context's clock gives defaults such as today's date. By default their
    /// columns and values come from `members`.
    static func insert(_ fields: Fields, context: RecordContext) -> Query
    static func replace(id: Int64, with fields: Fields, context: RecordContext) -> Query
    static func update(id: Int64, with fields: Fields, in ledger: LedgerID) -> Query
    static func delete(id: Int64, in ledger: LedgerID) -> Query
    /// A seed's record under its id (or the next server id), with the times and version an export wrote.
    static func seedInsert(_ record: SeedRecord<Fields>, context: RecordContext) -> Query
    /// The unique key `fields` would take that another record of the ledger (other than `id`) may hold
    /// already, checked before the write so that its 409 names that record; nil (the default) when the
    /// fields set none.
    static func takenKey(_ fields: Fields, excluding id: Int64?, in ledger: LedgerID) -> TakenKey?
    /// Records `fields` name that the ledger may lack where no foreign key's error could say which member
    /// names them (a split's parts' categories), asked before the write; nil (the default) when there are none.
    static func missingReferences(_ fields: Fields, in ledger: LedgerID) -> MissingReferences?
    /// One statement inserting the records of `fields` (an array body's, in order), answering a row for each as
    /// `insert` does, when every one of them gives a row of it (`CombinableInserts.combinableRow`); nil (the
    /// default) when one needs statements of its own, and for every resource without combinable inserts.
    static func insert(together fields: ArraySlice<Fields>, context: RecordContext) -> Query?
    /// Every record of the ledger with its exported members (`shape.exported`'s columns) in id order, what
    /// `export` writes; by default the whole table.
    static func exportRows(in ledger: LedgerID) -> Query

    /// Mounts the resource's routes: by default `RecordRoutes`, the collection and its records.
    static func register(in router: inout Router<Database>, clock: CivilClock)
    /// The create routes among those `register` mounts whose creates an atomic batch may write several at a
    /// time, one INSERT for a run of them (`CombinableCreate`); none by default.
    static func combinableCreates(clock: CivilClock) -> [RouteSignature: CombinableCreate]
}

/// A typed resource whose creates can share one INSERT statement (`CombinableCreate`).
protocol CombinableInserts: TypedResource {
    /// `fields`' row for `insert(rows:)`, or nil when this create needs a statement of its own (a split,
    /// which writes its parts in the same statement).
    static func insertRow(_ fields: Fields, context: RecordContext) -> Query?
    /// Inserts one record per element of `rows` (`insertRow`), answering a row for each, as `insert` does, in
    /// the order of `rows`.
    static func insert(rows: [Query]) -> Query
}

extension CombinableInserts {
    /// `fields`' row for `insert(rows:)` when its create needs no statement but its INSERT: nothing to look up
    /// first (`takenKey`, `missingReferences`: `RecordRoutes.create` sends those before the write) and no
    /// statement of its own (`insertRow`). An atomic batch's run of creates and an array body share it.
    static func combinableRow(_ fields: Fields, context: RecordContext) -> Query? {
        guard takenKey(fields, excluding: nil, in: context.ledger) == nil, missingReferences(fields, in: context.ledger) == nil else {
            return nil
        }
        return insertRow(fields, context: context)
    }

    /// nil too when a record without an id follows one with an id: one statement moves the id sequence past
    /// the ids clients chose only when it ends (migrations/0013's capture), so the later record would take
    /// the sequence's next id where one statement per record gives it the one after the client's (and could
    /// meet an id chosen in the same array).
    static func insert(together fields: ArraySlice<Fields>, context: RecordContext) -> Query? {
        var rows: [Query] = []
        rows.reserveCapacity(fields.count)
        var chosenID = false
        for fields in fields {
            let hasID = id(of: fields) != nil
            guard hasID || !chosenID, let row = combinableRow(fields, context: context) else { return nil }
            chosenID = chosenID || hasID
            rows.append(row)
        }
        return rows.isEmpty ? nil : insert(rows: rows)
    }
}

extension TypedResource {
    static var joins: Query { "" }

    static var shape: RecordShape { members.shape }

    static var alias: SQLIdentifier { members.alias }

    static var constraints: [ResourceConstraint] { [] }

    static func takenKey(_ fields: Fields, excluding id: Int64?, in ledger: LedgerID) -> TakenKey? { nil }

    static func missingReferences(_ fields: Fields, in ledger: LedgerID) -> MissingReferences? { nil }

    static func insert(together fields: ArraySlice<Fields>, context: RecordContext) -> Query? { nil }

    static func combinableCreates(clock: CivilClock) -> [RouteSignature: CombinableCreate] { [:] }

    /// The table under its alias, e.g. `transactions t`: the stored and kept members read from it alone.
    static var table: Query { "\(tableName) \(alias)" }

    /// What every member of `shape` reads from: `table` with `joins`.
    static var source: Query { joining(table) }

    /// The id column, which is also the default order of lists, e.g. `t.id`.
    static var idColumn: Query { "\(alias).id" }

    /// The row `alias` is one of `ledger`'s: the predicate every statement on the table carries, written
    /// here once (docs/architecture.md). Ids are per ledger, so a record is `(ledger_id, id)`.
    static func inLedger(_ ledger: LedgerID) -> Query { "\(alias).ledger_id = \(ledger)" }

    /// What a write statement answers after the id and whether it created: the `record` columns of the row
    /// it wrote, which its CTE named `alias` holds (see `WrittenRecord`).
    static var writtenRecord: Query { "\(shape.record.columns) FROM \(joining("\(alias)"))" }

    /// `row` followed by `joins`, when there are any.
    private static func joining(_ row: Query) -> Query {
        joins.sql.isEmpty ? row : "\(row) \(joins)"
    }

    /// The column of the member `name`, e.g. `category_id` for `categoryId`.
    static func column(of name: String) -> SQLIdentifier? { members.column(of: name) }

    /// The table, as statements name it.
    static var tableName: SQLIdentifier { SQLIdentifier(collection) }

    /// A new record's id: the client's, or the next of the table's id sequence (`<table>_id_seq`, the name
    /// PostgreSQL gives an identity column's sequence, which migrations/0013's capture triggers take too).
    static func newID(_ fields: Fields) -> Query {
        "coalesce(\(id(of: fields))::bigint, nextval('\(SQLIdentifier("\(collection)_id_seq"))'))"
    }

    /// Inserts under the client's id, or the next server id when it gave none.
    static func insert(_ fields: Fields, context: RecordContext) -> Query {
        """
        WITH \(alias) AS (
            INSERT INTO \(tableName) (ledger_id, id, \(members.columns))
            VALUES (\(context.ledger), \(newID(fields)), \(members.values(fields, today: context.clock.today)))
            RETURNING *)
        SELECT \(alias).id, true, \(writtenRecord)
        """
    }

    /// PUT: replaces the record with this id, or creates it under this id; the first column says which.
    /// The conflict sets `replacing` (by default `members.replacements`).
    static func replaceStatement(id: Int64, with fields: Fields, context: RecordContext, replacing: [Query]? = nil) -> Query {
        let set = Query.joined(
            (replacing ?? members.replacements(fields)) + ["version = existing.version + 1, updated_at = now()"], separator: ", ")
        return """
            WITH \(alias) AS (
                INSERT INTO \(tableName) AS existing (ledger_id, id, \(members.columns))
                VALUES (\(context.ledger), \(id), \(members.values(fields, today: context.clock.today)))
                ON CONFLICT (ledger_id, id) DO UPDATE
                    SET \(set)
                RETURNING *, xmax = 0 AS inserted)
            SELECT \(alias).id, \(alias).inserted, \(writtenRecord)
            """
    }

    static func replace(id: Int64, with fields: Fields, context: RecordContext) -> Query {
        replaceStatement(id: id, with: fields, context: context)
    }

    /// PATCH: changes only the members given; no row means no such record.
    static func update(id: Int64, with fields: Fields, in ledger: LedgerID) -> Query {
        updateStatement(id: id, setting: members.assignments(fields), in: ledger)
    }

    /// A record under its seed id (or the next server id), with the times and version an export wrote.
    static func seedInsert(_ record: SeedRecord<Fields>, context: RecordContext) -> Query {
        """
        INSERT INTO \(tableName) (ledger_id, id, \(members.seedColumns))
        VALUES (\(context.ledger), \(newID(record.fields)), \(members.seedValues(record, today: context.clock.today)))
        """
    }

    /// PATCH: bumps `version` and `updated_at` and sets `assignments` on the ledger's record with this id; no
    /// row when there is none.
    static func updateStatement(id: Int64, setting assignments: [Query], in ledger: LedgerID) -> Query {
        let set = Query.joined(["version = version + 1, updated_at = now()"] + assignments, separator: ", ")
        return """
            WITH \(alias) AS (UPDATE \(table) SET \(set) WHERE \(inLedger(ledger)) AND \(idColumn) = \(id) RETURNING \(alias).*)
            SELECT \(alias).id, false, \(writtenRecord)
            """
    }

    /// DELETE: removes the ledger's records `condition` picks (over the table's own columns), answering what each was.
    /// The CTE's snapshot predates the delete, so a category's `spent` still counts the transactions its
    /// foreign keys' cascade removes with it (and its budgets; each leaves a tombstone in the change feed).
    static func deleteStatement(where condition: Query, in ledger: LedgerID) -> Query {
        """
        WITH \(alias) AS (DELETE FROM \(table) WHERE \(inLedger(ledger)) AND (\(condition)) RETURNING \(alias).*)
        SELECT \(alias).id, false, \(writtenRecord)
        """
    }

    static func delete(id: Int64, in ledger: LedgerID) -> Query { deleteStatement(where: "\(idColumn) = \(id)", in: ledger) }

    /// `shape`'s records of `ledger` over `source`.
    static func plainSource(in ledger: LedgerID) -> ListSource {
        ListSource(from: source, shape: shape, element: .plain(shape.record), tieBreak: idColumn, scope: inLedger(ledger))
    }

    static func listSource(for request: Request, context: RecordContext) throws -> ListSource { plainSource(in: context.ledger) }

    static var listFormats: [ListFormat] { [.json] }

    static func csvListSource(for request: Request, context: RecordContext) throws -> ListSource {
        try listSource(for: request, context: context)
    }

    /// A list request's answer and the source it reads: `csvListSource` when `Accept` chose CSV.
    static func listAnswer(for request: Request, context: RecordContext, maxRows: Int?) throws -> (answer: ListAnswer, source: ListSource) {
        let source =
            ListFormat(request, among: listFormats) == .csv
            ? try csvListSource(for: request, context: context) : try listSource(for: request, context: context)
        return (try ListAnswer(request: request, source: source, maxRows: maxRows, formats: listFormats), source)
    }

    /// The ledger's record's `shape` columns; no row when there is no such record.
    static func find(id: Int64, in ledger: LedgerID) -> Query {
        "SELECT \(shape.record.columns) FROM \(source) WHERE \(inLedger(ledger)) AND \(idColumn) = \(id)"
    }

    static func find(id: Int64, for request: Request, context: RecordContext) throws -> RecordRead {
        .plain(find(id: id, in: context.ledger), shape.record)
    }

    static func exportRows(in ledger: LedgerID) -> Query {
        "SELECT \(shape.exported.columns) FROM \(table) WHERE \(inLedger(ledger)) ORDER BY \(idColumn)"
    }

    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Self>(clock: clock).register(in: &router)
    }
}

/// What a record's statements need besides its fields: the ledger they act in (every statement names it)
/// and what today and this month are.
struct RecordContext: Sendable {
    let clock: CivilClock
    let ledger: LedgerID
}

/// Every typed resource, registered once: routes, the change feed, the home page's counts, seed, export
/// and the names a generic collection may not take all iterate over this list.
///
/// The order matters: a seed loads the resources in it (an owner before the records that point at it), a
/// wipe deletes them in reverse, and export, the feed's columns and the home page follow it.
enum TypedResources {
    static let all: [any TypedResource.Type] = [Categories.self, Accounts.self, Transactions.self, Budgets.self, Schedules.self]

    /// The collection names, in order.
    static let names: [String] = all.map { $0.collection }
}

/// What a list reads, built per request: where its rows come from, the members each row has, and the order
/// that breaks ties of `_sort`.
struct ListSource: Sendable {
    /// The FROM list the members' SQL refers to, e.g. `transactions t`; bound values welcome.
    var from: Query
    /// The members, for the query language's filters and for plain rendering.
    var shape: RecordShape
    /// What the list answers per record: `shape`'s plain record, or JSON rendered in SQL.
    var element: ListElement
    /// The default order of lists, e.g. `t.id`.
    var tieBreak: Query
    /// Which rows of `from` belong to the list at all: the ledger's (`TypedResource.inLedger`); a route ANDs
    /// its own scope to it.
    var scope: Query
    /// Query parameters the source took for itself, which the query language therefore does not see.
    var parameters: Set<String> = []
    /// For CSV, text read once per answer for a member of `element`'s record (`CellLookup`).
    var lookup: CellLookup?
}

/// A unique key a write would take, and how to find the record that holds it already.
struct TakenKey: Sendable {
    /// The member, e.g. `importId`.
    let field: String
    let detail: String
    /// Answers the id of the record holding the key, if one does.
    let holder: Query
    /// The collection the holder belongs to, for its `Location`.
    let collection: String

    /// Throws the 409 naming the holder when `result` (of `holder`) found one.
    func refuse(_ result: QueryResult) throws {
        guard result.count > 0 else { return }
        let id = try result[0].decode(Int64.self, at: 0)
        throw APIError.taken(field: field, detail: detail, location: "/\(collection)/\(id)")
    }
}

/// Records a write names that the ledger may not have, and the 422 that names the members naming them.
struct MissingReferences: Sendable {
    /// Answers one row per missing record, its first column the index `problem` takes.
    let query: Query
    /// The invalid field for the index a row of `query` answered, e.g. `splits[1].categoryId`.
    let problem: @Sendable (_ index: Int64) -> Problem.FieldError

    /// Throws the 422 naming every missing record `result` (of `query`) holds, its fields after `prefix`
    /// (`[2].` for the third record of an array body).
    func refuse(_ result: QueryResult, prefix: String = "") throws {
        guard result.count > 0 else { return }
        throw APIError.invalidFields(
            try result.map { row in
                let error = problem(try row.decode(Int64.self, at: 0))
                return Problem.FieldError(field: prefix + error.field, message: error.message)
            })
    }
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
        try self.init(result[0], rendering: record)
    }

    /// One row of a `TypedResource` write, its columns from the third on rendered by `record`.
    init(_ row: Row, rendering record: PlainRecord) throws {
        self.init(id: try row.decode(Int64.self, at: 0), isCreated: try row.decode(Bool.self, at: 1), json: record.json(row, from: 2))
    }

    /// Every row of a `TypedResource` write of several records (`CombinableInserts.insert(rows:)`), in order.
    static func rows(_ result: QueryResult, rendering record: PlainRecord) throws -> [WrittenRecord] {
        try (0..<result.count).map { index in try WrittenRecord(result[index], rendering: record) }
    }
}

extension Connection {
    /// Runs a write query of a `TypedResource`; nil when it touched no row.
    func write(_ query: Query, rendering record: PlainRecord) throws -> WrittenRecord? {
        try WrittenRecord(self.query(query), rendering: record)
    }
}
