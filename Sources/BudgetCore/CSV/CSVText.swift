/// Fields written as CSV (RFC 4180): separated by commas, each record ended by CRLF (§2.1), a field quoted
/// when it holds a comma, a quote, CR or LF, with its quotes doubled (§2.6, §2.7). The one place CSV is
/// quoted: `PlainRecord`'s CSV rows (lists, the spending report) write their cells through it.
public enum CSVText {
    /// RFC 4180 §3 registers `text/csv`; our fields are UTF-8.
    public static let contentType = "text/csv; charset=utf-8"
    /// The media type `Accept` names, as `Request.preferredMediaType(among:)` compares it.
    public static let mediaType = "text/csv"

    public static let comma = UInt8(ascii: ",")
    public static let quote = UInt8(ascii: "\"")
    public static let recordEnd: [UInt8] = [13, 10]
    /// The first characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection): `=`, `+`,
    /// `-`, `@`, a tab and a carriage return. An export puts `'` before a text cell starting with one; an
    /// import drops it again (docs/import.md).
    public static let formulaTriggers: Set<UInt8> = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 9, 13]

    /// Appends `field` as it is, quoted if it must be. For names and values the server wrote itself
    /// (numbers, dates), which never start a formula.
    public static func append(_ field: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        append(field, defused: false, to: &output)
    }

    /// Appends text a client wrote, defused first: a cell that starts with `=`, `+`, `-`, `@`, a tab or a
    /// carriage return is one a spreadsheet may run as a formula (OWASP, "CSV Injection"), so it gets a `'` in
    /// front, which spreadsheets show as text (docs/api.md, CSV).
    public static func appendText(_ text: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        append(text, defused: startsFormula(text), to: &output)
    }

    /// Concrete over the column's bytes, not generic, and copying runs whole as `JSONQuoting` does: this is
    /// every text cell of an export.
    private static func append(_ field: UnsafeRawBufferPointer, defused: Bool, to output: inout [UInt8]) {
        guard field.contains(where: needsQuotes) else {
            if defused { output.append(UInt8(ascii: "'")) }
            return output.append(contentsOf: field)
        }
        output.append(quote)
        if defused { output.append(UInt8(ascii: "'")) }
        var runStart = 0
        for (index, byte) in field.enumerated() where byte == quote {
            // The run up to and including the quote, then the quote again (§2.7).
            output.append(contentsOf: field[runStart...index])
            output.append(quote)
            runStart = index + 1
        }
        output.append(contentsOf: field[runStart...])
        output.append(quote)
    }

    /// Appends one record of fields the server wrote itself (a header row), with its CRLF.
    public static func appendRecord(_ fields: [String], to output: inout [UInt8]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { output.append(comma) }
            var field = field
            field.withUTF8 { append(UnsafeRawBufferPointer($0), to: &output) }
        }
        output += recordEnd
    }

    /// A cell as the file meant it: the `'` an export put before a text cell that starts with `=`, `+`, `-`,
    /// `@`, a tab or a carriage return, so that spreadsheets read it as text (docs/import.md, Formula cells),
    /// is dropped. An export also puts one before a cell that starts with quotes and then one of those, so a
    /// text that really starts with `'=` comes back as it was.
    public static func undefused(_ cell: String) -> String {
        let utf8 = cell.utf8
        guard utf8.first == UInt8(ascii: "'"), let first = utf8.drop(while: { $0 == UInt8(ascii: "'") }).first,
            formulaTriggers.contains(first)
        else { return cell }
        return String(cell.dropFirst())
    }

    private static func needsQuotes(_ byte: UInt8) -> Bool {
        byte == comma || byte == quote || byte == 13 || byte == 10
    }

    /// Whether `text` starts with a formula character, after any `'`s: a text that really starts with `'=` gets
    /// one more `'` too, so that an import, which drops one, reads it back as it was.
    private static func startsFormula(_ text: UnsafeRawBufferPointer) -> Bool {
        guard let first = text.first(where: { $0 != UInt8(ascii: "'") }) else { return false }
        return formulaTriggers.contains(first)
    }
}
