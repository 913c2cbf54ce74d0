import BudgetCore
import JSONText
import Postgres

/// A typed record read as plain columns and written as JSON in Swift, byte for byte as `row_to_json` writes it.
///
/// PostgreSQL is the one tier that cannot be scaled out, and rendering JSON there (`row_to_json`, `to_char`,
/// `string_agg`) cost most of a read's CPU (bench/README.md). Each member pairs its JSON name with
/// the SQL expression that selects it, so a `*Queries` file states both at once and their order cannot drift.
/// The change feed renders its records with these too; the SQL renderers stay for `_embed`/`_expand` and
/// export, which must write the same bytes.
struct PlainRecord: Sendable {
    /// How a column's text (connections run with `TimeZone=UTC`, `DateStyle=ISO`) becomes JSON (and CSV).
    enum Kind: Sendable {
        /// Integers and `numeric`: the text is already the JSON number, `numeric(14,2)` with its two decimals.
        case number
        /// Text, escaped as `to_json` escapes it.
        case string
        /// A `date` (`2026-11-21`), quoted as it is.
        case date
        /// A `timestamptz` (`2026-11-21 08:00:00.123456+00`) as `to_char(… 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`
        /// writes it: `2026-11-21T08:00:00Z`, the fraction cut (not rounded) to whole seconds (docs/api.md).
        case timestamp
        /// A `boolean`, whose text is `t` or `f`: `true` or `false`.
        case boolean
        /// A `date` holding a month's first day (`2026-11-01`), written `"2026-11"`.
        case month
        /// A `json` value, whose text is already JSON (rendered in SQL by `row_to_json`, which writes
        /// numbers and strings as this type does): written as it is.
        case raw

        /// How a member of this SQL type is written.
        init(_ type: ColumnType) {
            switch type {
            case .integer, .money: self = .number
            case .text: self = .string
            case .date: self = .date
            case .timestamp: self = .timestamp
            case .boolean: self = .boolean
            case .month: self = .month
            case .json: self = .raw
            }
        }
    }

    /// The select list, one column per member, in member order.
    private(set) var columns: Query
    /// The same members as a select list for `row_to_json` (`SQLFragments.jsonObject`), which takes each
    /// member's name from its alias: what the SQL renderers select, so both renderers list the same members.
    let renderedColumns: Query
    let kinds: [Kind]
    /// How many columns `columns` selects.
    var columnCount: Int { kinds.count }
    /// `{"id":`, `,"title":`, …: each member's name with the punctuation before it, built once.
    let prefixes: [[UInt8]]
    /// A guess at one record's size, so a buffer is allocated once for most pages.
    let typicalSize: Int
    /// The CSV header row: each member's name, in member order, with its CRLF (docs/api.md, CSV).
    let csvHeader: [UInt8]
    /// Each member's name and SQL, for `selectingNull`.
    private let members: [(name: String, sql: Query)]

    init(_ members: [RecordField]) {
        self.members = members.map { ($0.name, $0.sql) }
        columns = Query.joined(members.map(\.sql), separator: ", ")
        renderedColumns = Query.joined(
            members.map { member in
                let value: Query =
                    switch member.type {
                    case .timestamp: SQLFragments.timestamp(member.sql)
                    case .month: "to_char(\(member.sql), 'YYYY-MM')"
                    default: member.sql
                    }
                return "\(value) AS \(Query(identifier: member.name))"
            }, separator: ", ")
        kinds = members.map { Kind($0.type) }
        prefixes = members.enumerated().map { index, member in
            Array((index == 0 ? "{" : ",").utf8) + JSONWriter.bytes(.string(member.name)) + [UInt8(ascii: ":")]
        }
        typicalSize = prefixes.reduce(1) { $0 + $1.count + 24 }
        var header: [UInt8] = []
        CSVText.appendRecord(members.map(\.name), to: &header)
        csvHeader = header
    }

    /// The same record with `names`' columns selected as NULL, for a list whose rows are known to hold null
    /// there (`RecordOwner.nullMembers`): PostgreSQL then prepares no subquery for them, which it does for every
    /// execution even when no row runs it (bench/README.md, The list). The JSON written is the same.
    func selectingNull(_ names: Set<String>) -> PlainRecord {
        var record = self
        record.columns = Query.joined(members.map { names.contains($0.name) ? "NULL" : $0.sql }, separator: ", ")
        return record
    }

    static let null = Array("null".utf8)
    static let `true` = Array("true".utf8)
    static let `false` = Array("false".utf8)
}
