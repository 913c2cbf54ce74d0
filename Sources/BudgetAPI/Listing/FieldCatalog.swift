import Postgres

/// How the field names of a query map to SQL: typed resources give an allow-list, generic collections a jsonb column.
protocol FieldCatalog: Sendable {
    /// The SQL for a (possibly dotted) field; typed catalogs throw 400 listing the known fields for an unknown one.
    func field(_ path: [String]) throws -> FieldReference
    /// Where `q=` looks: a document reference with an empty path searches every string and number in the record.
    var searchableFields: [FieldReference] { get }
    /// SQL that holds when some record of the list's collection has the field, for a parameter json-server 0.17
    /// ignores otherwise; nil when every field `field(_:)` accepts exists (a typed record's columns).
    func presence(of path: [String]) -> Query?
}

/// A field resolved to SQL. Column SQL is program text from an allow-list; document paths are always bound.
enum FieldReference: Sendable, Equatable {
    /// A column (or expression) the program wrote, with the type its comparisons follow.
    case column(sql: Query, type: ColumnType)
    /// A member of a jsonb column, reached with `column #> path` where `path` is a bound text[].
    case document(column: Query, path: [String])
}

/// The SQL types a typed field can have; each decides how query text is read (values compare by type:
/// docs/json-server.md, the query language).
enum ColumnType: Sendable, Equatable {
    case integer, money, text, date, timestamp, boolean
    /// A `date` holding a month's first day, written and queried as `YYYY-MM`.
    case month
    /// A `json` value written into the record as it is (a split's `splits`); the query language neither
    /// filters nor sorts on it (`ColumnCatalog.field` answers 400).
    case json

    /// The SQL type the bound query text is cast to.
    var sqlName: Query {
        switch self {
        case .integer: "bigint"
        case .money: "numeric"
        case .text: "text"
        case .date: "date"
        case .timestamp: "timestamptz"
        case .boolean: "boolean"
        case .month: "date"
        case .json: "json"
        }
    }
}

/// The catalog of a generic collection: every field is a path into one jsonb column of `documents`.
struct DocumentCatalog: FieldCatalog {
    /// The jsonb column, qualified by the caller's alias, e.g. `d.doc`.
    let column: Query
    /// The collection listed (for a nested route, the children's collection); its name is always bound.
    let collection: String
    /// The ledger whose collection it is: another ledger's records never decide a field's presence.
    let ledger: LedgerID

    func field(_ path: [String]) throws -> FieldReference {
        .document(column: column, path: path)
    }

    var searchableFields: [FieldReference] { [.document(column: column, path: [])] }

    /// Whether any record of the collection has the member at `path`, a JSON null included, as lodash's
    /// `_.has` decides for json-server 0.17.
    ///
    /// Uncorrelated, so PostgreSQL runs it once per statement (an InitPlan). The ORDER BY makes it walk
    /// `documents_collection_position_idx` within the collection and stop at the first record that has the field,
    /// usually the first one read (an EXISTS would let the planner pick a sequential scan of every collection);
    /// a field no record has costs one pass over the collection, the pass json-server makes too
    /// (docs/json-server.md, what the indexes cover).
    func presence(of path: [String]) -> Query? {
        """
        coalesce((SELECT true FROM documents present WHERE present.ledger_id = \(ledger) AND present.collection = \(collection) \
        AND present.doc #> \(path)::text[] IS NOT NULL ORDER BY present.position LIMIT 1), false)
        """
    }
}

/// The catalog of a typed resource: an allow-list of fields, each one column of known type.
struct ColumnCatalog: FieldCatalog {
    /// The record's name in messages, e.g. `transaction`.
    let recordName: String
    /// The fields a client may name, each with the SQL it stands for (`RecordShape` builds this from its fields).
    let columns: [RecordField]

    func field(_ path: [String]) throws -> FieldReference {
        let name = path.joined(separator: ".")
        guard let column = columns.first(where: { $0.name == name }) else {
            // docs/json-server.md: on typed resources an unknown field is a 400 that lists the known fields.
            let known = columns.map(\.name).joined(separator: ", ")
            throw APIError.malformedQuery("unknown field '\(name)' for a \(recordName); known fields: \(known)")
        }
        guard column.type != .json else {
            throw APIError.malformedQuery("the field \(name) of a \(recordName) can be neither filtered nor sorted on")
        }
        return .column(sql: column.sql, type: column.type)
    }

    var searchableFields: [FieldReference] {
        columns.filter(\.isSearchable).map { .column(sql: $0.sql, type: $0.type) }
    }

    /// Typed fields always exist, and an unknown one is a 400 from `field(_:)` instead of being ignored.
    func presence(of path: [String]) -> Query? { nil }
}
