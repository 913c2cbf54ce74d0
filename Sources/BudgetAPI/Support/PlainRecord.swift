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
    /// How a column's text (connections run with `TimeZone=UTC`, `DateStyle=ISO`) becomes JSON.
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

        /// How a member of this SQL type is written.
        init(_ type: ColumnType) {
            switch type {
            case .integer, .money: self = .number
            case .text: self = .string
            case .date: self = .date
            case .timestamp: self = .timestamp
            case .boolean: self = .boolean
            case .month: self = .month
            }
        }
    }

    /// The select list, one column per member, in member order.
    let columns: Query
    /// The same members as a select list for `row_to_json` (`SQLFragments.jsonObject`), which takes each
    /// member's name from its alias: what the SQL renderers select, so both renderers list the same members.
    let renderedColumns: Query
    private let kinds: [Kind]
    /// How many columns `columns` selects.
    var columnCount: Int { kinds.count }
    /// `{"id":`, `,"title":`, …: each member's name with the punctuation before it, built once.
    private let prefixes: [[UInt8]]
    /// A guess at one record's size, so a buffer is allocated once for most pages.
    private let typicalSize: Int

    init(_ members: [RecordField]) {
        columns = Query.joined(members.map(\.sql), separator: ", ")
        renderedColumns = Query.joined(members.map { member in
            let value: Query = switch member.type {
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
    }

    /// The record in `row`'s columns `column…`, as one JSON object.
    func json(_ row: Row, from column: Int) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(typicalSize)
        append(row, from: column, to: &output)
        return output
    }

    /// The records of `result`'s rows as one JSON array, skipping a row whose first member column is NULL:
    /// what an empty page, left joined to the list's header columns, answers.
    func jsonArray(_ result: QueryResult, from column: Int) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "[")]
        output.reserveCapacity(result.count * typicalSize + 2)
        for row in result where row.withBytes(at: column, { $0 != nil }) {
            if output.count > 1 { output.append(UInt8(ascii: ",")) }
            append(row, from: column, to: &output)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }

    private func append(_ row: Row, from column: Int, to output: inout [UInt8]) {
        for (index, kind) in kinds.enumerated() {
            output += prefixes[index]
            row.withBytes(at: column + index) { text in
                guard let text else { return output += Self.null }
                switch kind {
                case .number: output.append(contentsOf: text)
                case .string: JSONQuoting.append(utf8: text, to: &output)
                case .date:
                    output.append(UInt8(ascii: "\""))
                    output.append(contentsOf: text)
                    output.append(UInt8(ascii: "\""))
                case .month:
                    // The day is the text's last three bytes (`-01`); the year may have more than four digits.
                    output.append(UInt8(ascii: "\""))
                    output.append(contentsOf: text.dropLast(3))
                    output.append(UInt8(ascii: "\""))
                case .timestamp: Self.appendTimestamp(text, to: &output)
                case .boolean: output += text.first == UInt8(ascii: "t") ? Self.true : Self.false
                }
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    private static let null = Array("null".utf8)
    private static let `true` = Array("true".utf8)
    private static let `false` = Array("false".utf8)

    /// `2026-11-21 08:00:00.1239+00` → `"2026-11-21T08:00:00Z"`: the date, the time to the second, and the
    /// fraction (if any) cut off, so that every default ISO 8601 decoder reads it.
    ///
    /// `infinity` has no date and time, and `to_char` answers NULL for it: so does this.
    private static func appendTimestamp(_ text: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        // The year may have more than four digits, so the date ends at the space, not at a fixed offset.
        guard let space = text.firstIndex(of: UInt8(ascii: " ")), space + 9 <= text.count else { return output += null }
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: text[..<space])
        output.append(UInt8(ascii: "T"))
        output.append(contentsOf: text[(space + 1)..<(space + 9)])
        output.append(UInt8(ascii: "Z"))
        output.append(UInt8(ascii: "\""))
    }
}
