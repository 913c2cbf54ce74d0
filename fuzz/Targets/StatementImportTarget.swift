@testable import BudgetCore

// Bank statements (docs/import.md): the CSV reader under the delimiter the input's first byte picks, and
// CSV writing, on any bytes. Reading the records into rows (StatementFormat, StatementRows) answers HTTP
// problems and lives in BudgetAPI, so its checks are left to BudgetAPI's tests: the fuzz build compiles only
// whole modules that need nothing beyond the standard library (README.md).

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let statement = Array(bytes.dropFirst())
    StatementImportTarget.checkReader(statement, delimiter: selector & 1 == 0 ? UInt8(ascii: ",") : UInt8(ascii: ";"))
    return 0
}

enum StatementImportTarget {
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
        invariant(read.map { $0.cells.map(CSVText.undefused) } == kept, "a defused cell reads back as another text")
    }
}
