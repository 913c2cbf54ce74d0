@testable import BudgetAPI
import HTTPServer

// Bank statements (docs/import.md): the CSV reader and the row validation of POST /transactions/import,
// on any bytes, under a format the input's first byte picks (delimiter, decimal comma, date format, one
// category, German headers, an amount column or outflow and inflow columns, the bank's or the budget's
// sense). No database: categories are resolved later.

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let statement = Array(bytes.dropFirst())
    StatementImportTarget.checkReader(statement, delimiter: selector & 1 == 0 ? UInt8(ascii: ",") : UInt8(ascii: ";"))
    StatementImportTarget.checkRows(statement, format: StatementImportTarget.format(selector))
    return 0
}

enum StatementImportTarget {
    /// One of the formats a bank might use, by the selector's bits.
    static func format(_ selector: UInt8) -> StatementFormat {
        var query: [(name: String, value: String)] = []
        if selector & 1 != 0 { query.append(("delimiter", ";")) }
        if selector & 2 != 0 { query.append(("decimal", ",")) }
        if selector & 4 != 0 { query.append(("dateFormat", "DD.MM.YYYY")) }
        if selector & 8 != 0 { query.append(("category", "3")) }
        // Bits 16 and 64: a German header for the date, and an amount column or outflow and inflow columns.
        switch (selector & 16 != 0, selector & 64 != 0) {
        case (true, false): query.append(("columns", "date:Buchungstag,amount:Betrag"))
        case (true, true): query.append(("columns", "date:Buchungstag,outflow:Soll,inflow:Haben"))
        case (false, true): query.append(("columns", "outflow:Soll,inflow:Haben"))
        case (false, false): break
        }
        if selector & 32 != 0 { query.append(("amounts", "budget")) }
        do {
            return try StatementFormat(query: query)
        } catch {
            fatalError("invariant: a fixed format was refused: \(error)")
        }
    }

    /// What the reader reads, written back as RFC 4180 and read again, is the same records; every line it
    /// names is one the input has.
    static func checkReader(_ bytes: [UInt8], delimiter: UInt8) {
        let lineCount = bytes.count { $0 == 10 || $0 == 13 } + 1
        let records: [CSVReader.Record]
        do {
            records = try CSVReader.records(bytes, delimiter: delimiter)
        } catch {
            invariant((1...lineCount).contains(error.line), "failure on line \(error.line) of \(lineCount)")
            return
        }
        var lastLine = 0
        for record in records {
            invariant(record.line > lastLine && record.line <= lineCount, "record line \(record.line) after \(lastLine), of \(lineCount)")
            invariant(!record.cells.contains { $0.utf8.contains(0) }, "a cell holds NUL")
            lastLine = record.line
        }
        guard delimiter == UInt8(ascii: ",") else { return }
        // A record of one empty cell is a blank line, which the reader skips: nothing to compare it with.
        let kept = records.map(\.cells).filter { $0 != [""] }
        // Written first, a cell starting with U+FEFF reads back as a byte order mark, which the reader skips.
        if kept.first?.first?.unicodeScalars.first == "\u{FEFF}" { return }
        var written: [UInt8] = []
        for cells in kept { CSVText.appendRecord(cells, to: &written) }
        guard let again = try? CSVReader.records(written) else { fatalError("invariant: written CSV does not read back") }
        invariant(again.map(\.cells) == kept, "written CSV reads back as other records")
        // As an export writes text cells, defused against formulas: an import's undefusing gives them back.
        var defused: [UInt8] = []
        for cells in kept {
            for (index, cell) in cells.enumerated() {
                if index > 0 { defused.append(CSVText.comma) }
                var text = cell
                text.withUTF8 { CSVText.appendText(UnsafeRawBufferPointer($0), to: &defused) }
            }
            defused += CSVText.recordEnd
        }
        guard let read = try? CSVReader.records(defused) else { fatalError("invariant: defused CSV does not read back") }
        invariant(read.map { $0.cells.map(StatementRows.undefused) } == kept, "a defused cell reads back as another text")
    }

    /// A statement is either refused with errors that name lines of the input, or read into as many rows as it
    /// has records after the header, each with an import id of at most 100 characters, none twice among the
    /// derived ones; a second pass reads the same rows (an import reads its statement twice).
    static func checkRows(_ bytes: [UInt8], format: StatementFormat) {
        let statement = StatementRows(csv: bytes, format: format)
        var rows: [StatementRows.Row] = []
        let errors = statement.forEachRow { rows.append($0) }
        let lineCount = bytes.count { $0 == 10 || $0 == 13 } + 1
        guard errors.isEmpty else {
            invariant(errors.entries.allSatisfy { (1...lineCount).contains($0.line) }, "an error names a line the input lacks")
            return
        }
        guard let records = try? CSVReader.records(bytes, delimiter: format.delimiter) else {
            fatalError("invariant: rows were read from a statement the reader refuses")
        }
        invariant(rows.count == records.count - 1, "\(rows.count) rows from \(records.count) records")
        invariant(rows.allSatisfy { (1...100).contains($0.importID.unicodeScalars.count) }, "an import id out of 1...100 characters")
        invariant(rows.allSatisfy { (1...200).contains($0.title.unicodeScalars.count) }, "a title out of 1...200 characters")
        // Without an importId column every id is derived, and the occurrence count keeps them apart.
        if let header = records.first, !header.cells.contains(where: { $0.trimmed.lowercased() == "importid" }) {
            invariant(Set(rows.map(\.importID)).count == rows.count, "a derived import id twice")
        }
        var again: [String] = []
        _ = statement.forEachRow { again.append($0.importID) }
        invariant(again == rows.map(\.importID), "a second pass reads other rows")
        checkSigns(rows, bytes: bytes, header: records.first?.cells ?? [], format: format)
    }

    /// A derived import id carries the amount as the file writes it (money out negative, for outflow and
    /// inflow columns too): the row's `amount` is its negation in the bank's sense and equal to it in the
    /// budget sense. Read in the other sense, a statement gives the same ids, and the amounts of an amount
    /// column negated, those of outflow and inflow columns unchanged.
    static func checkSigns(_ rows: [StatementRows.Row], bytes: [UInt8], header: [String], format: StatementFormat) {
        guard let columns = try? format.columns(ofHeader: header) else { fatalError("invariant: rows from a header that is refused") }
        let readsFlows = columns.values.contains("outflow")
        invariant(
            readsFlows == columns.values.contains("inflow") && readsFlows != columns.values.contains("amount"),
            "one amount column or two flow columns: \(columns)")
        let isBankSense = readsFlows || format.sense(isCSV: true) == .bank
        if !columns.values.contains("importId") {
            for row in rows {
                guard let cents = row.importID.split(separator: ":").dropLast().last.flatMap({ Int64($0) }) else {
                    fatalError("invariant: a derived import id without cents: \(row.importID)")
                }
                invariant(row.amount.cents == (isBankSense ? -cents : cents), "amount \(row.amount) from id \(row.importID)")
            }
        }
        var opposite = format
        opposite.amountSense = format.sense(isCSV: true) == .bank ? .budget : .bank
        var other: [StatementRows.Row] = []
        let errors = StatementRows(csv: bytes, format: opposite).forEachRow { other.append($0) }
        invariant(errors.isEmpty && other.map(\.importID) == rows.map(\.importID), "the other sense reads other rows")
        invariant(zip(other, rows).allSatisfy { $0.amount == (readsFlows ? $1.amount : -$1.amount) }, "the other sense's amounts")
    }
}
