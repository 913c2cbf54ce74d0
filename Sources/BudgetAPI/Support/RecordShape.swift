import Postgres

/// One member of a typed record, declared once: its JSON name, the SQL that selects it, the type its
/// comparisons and its JSON follow, and where its value comes from.
///
/// A resource's record (`PlainRecord`), its list filters (`ColumnCatalog`), its export and the fields its
/// writes accept or ignore are all read from one list of these (docs/architecture.md, Adding a typed resource).
struct RecordField: Sendable {
    /// Where a member's value comes from, which decides what writes and exports do with it.
    enum Origin: Sendable {
        /// Written by clients and stored: `title`, `amount`; the id too, which a client may choose.
        case stored
        /// Kept by the server (`createdAt`, `updatedAt`, `version`): exported, ignored when a client sends it back.
        case kept
        /// Computed on every read (`spent`, `remaining`): neither exported nor written, ignored when sent back.
        case derived
    }

    let name: String
    /// The SQL over the resource's aliases, e.g. `t.amount`; program text only.
    let sql: Query
    let type: ColumnType
    let origin: Origin
    /// Whether `q=` looks in it (json-server's q searches strings and numbers; we search the text-like members).
    let isSearchable: Bool

    init(_ name: String, _ sql: Query, _ type: ColumnType, _ origin: Origin, isSearchable: Bool = false) {
        (self.name, self.sql, self.type, self.origin, self.isSearchable) = (name, sql, type, origin, isSearchable)
    }
}

/// The members of a typed record in their JSON order, and everything built from them once.
struct RecordShape: Sendable {
    let fields: [RecordField]
    /// The record as plain columns rendered in Swift: every member.
    let record: PlainRecord
    /// What the query language may filter and sort on: every member.
    let catalog: ColumnCatalog
    /// The members a db.json export holds: all but the derived ones.
    let exported: PlainRecord

    init(recordName: String, fields: [RecordField]) {
        self.fields = fields
        record = PlainRecord(fields)
        catalog = ColumnCatalog(recordName: recordName, columns: fields)
        exported = PlainRecord(fields.filter { $0.origin != .derived })
    }

    /// The SQL of the `version` member, which every typed record has: the change feed reads it beside a record.
    var version: Query {
        guard let field = fields.first(where: { $0.name == "version" }) else { preconditionFailure("a typed record without version") }
        return field.sql
    }

    /// The members a write body may set.
    var writableNames: Set<String> { Set(fields.filter { $0.origin == .stored }.map(\.name)) }

    /// The members a client may send back from what it read, which writes ignore.
    var readOnlyNames: Set<String> { Set(fields.filter { $0.origin != .stored }.map(\.name)) }
}
