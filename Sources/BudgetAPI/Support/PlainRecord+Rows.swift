import BudgetCore
import JSONText
import Postgres

// Rendering a `PlainRecord` from a result's rows, apart from its declaration so that code which only
// declares records (the fuzz targets' build, fuzz/run) needs none of the result types.
extension PlainRecord {
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
        var scratch: [UInt8] = []
        for row in result where row.withBytes(at: column, { $0 != nil }) {
            if output.count > 1 { output.append(UInt8(ascii: ",")) }
            append(row, from: column, to: &output, scratch: &scratch)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }

    /// Appends the record in `row`'s columns `column…` to `output`, as one JSON object.
    func append(_ row: Row, from column: Int, to output: inout [UInt8]) {
        var scratch: [UInt8] = []
        append(row, from: column, to: &output, scratch: &scratch)
    }

    /// The same, with the buffer a binary result's values become text in (`Row.withText`), kept across rows.
    /// A binary row's numbers and times are written here, from their binary form, rather than by PostgreSQL.
    func append(_ row: Row, from column: Int, to output: inout [UInt8], scratch: inout [UInt8]) {
        for (index, kind) in kinds.enumerated() {
            output += prefixes[index]
            row.withText(at: column + index, scratch: &scratch) { text in
                guard let text else { return output += Self.null }
                switch kind {
                case .number, .raw: output.append(contentsOf: text)
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

    /// `2026-11-21 08:00:00.1239+00` → `"2026-11-21T08:00:00Z"`: the date, the time to the second, and the
    /// fraction (if any) cut off, so that every default ISO 8601 decoder reads it.
    ///
    /// `infinity` has no date and time, and `to_char` answers NULL for it: so does this.
    private static func appendTimestamp(_ text: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        guard let space = timestampSpace(text) else { return output += null }
        output.append(UInt8(ascii: "\""))
        appendTimestamp(text, space: space, to: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// `2026-11-21T08:00:00Z` from a timestamp's text whose date ends at `space` (`timestampSpace`).
    @inline(__always)
    private static func appendTimestamp(_ text: UnsafeRawBufferPointer, space: Int, to output: inout [UInt8]) {
        output.append(contentsOf: text[..<space])
        output.append(UInt8(ascii: "T"))
        output.append(contentsOf: text[(space + 1)..<(space + 9)])
        output.append(UInt8(ascii: "Z"))
    }

    /// Where a timestamp's date ends: the year may have more than four digits, so at the space, not at a fixed
    /// offset; nil for a text without a time (`infinity`).
    @inline(__always)
    private static func timestampSpace(_ text: UnsafeRawBufferPointer) -> Int? {
        guard let space = text.firstIndex(of: UInt8(ascii: " ")), space + 9 <= text.count else { return nil }
        return space
    }
}

// The same records as CSV (RFC 4180, docs/api.md, CSV): the header row of the members' names, then a row per
// record from the same columns, each cell what the JSON value holds without JSON's quoting.
extension PlainRecord {
    /// The records of `result`'s rows as CSV with its header row, skipping a row whose first member column is
    /// NULL, as `jsonArray` does.
    func csv(_ result: QueryResult, from column: Int) -> [UInt8] {
        var output = csvHeader
        output.reserveCapacity(result.count * typicalSize + csvHeader.count)
        var scratch: [UInt8] = []
        for row in result where row.withBytes(at: column, { $0 != nil }) {
            appendCSV(row, from: column, to: &output, scratch: &scratch)
        }
        return output
    }

    /// Appends the record in `row`'s columns `column…` to `output`, as one CSV row with its CRLF: numbers and
    /// money as PostgreSQL's text (money with its two decimals, never defused: `-12.50` is a number), dates
    /// `YYYY-MM-DD`, months `YYYY-MM`, timestamps as JSON writes them, booleans `true`/`false`, text quoted
    /// and defused (`CSVText.appendText`), NULL an empty cell. `table`'s member shows its text instead of its
    /// key (an empty cell for a key it does not hold).
    func appendCSV(_ row: Row, from column: Int, to output: inout [UInt8], table: CellTable? = nil) {
        var scratch: [UInt8] = []
        appendCSV(row, from: column, to: &output, table: table, scratch: &scratch)
    }

    /// The same, with the buffer a binary result's values become text in (`Row.withText`), kept across rows.
    func appendCSV(_ row: Row, from column: Int, to output: inout [UInt8], table: CellTable? = nil, scratch: inout [UInt8]) {
        for (index, kind) in kinds.enumerated() {
            if index > 0 { output.append(CSVText.comma) }
            row.withText(at: column + index, scratch: &scratch) { text in
                guard let text else { return }
                if let table, index == table.member {
                    if let looked = table.text(forKey: text) { looked.withUnsafeBytes { CSVText.appendText($0, to: &output) } }
                    return
                }
                switch kind {
                case .number, .date: output.append(contentsOf: text)
                case .string, .raw: CSVText.appendText(text, to: &output)
                case .month: output.append(contentsOf: text.dropLast(3))
                case .timestamp:
                    if let space = Self.timestampSpace(text) { Self.appendTimestamp(text, space: space, to: &output) }
                case .boolean: output += text.first == UInt8(ascii: "t") ? Self.true : Self.false
                }
            }
        }
        output += CSVText.recordEnd
    }
}
