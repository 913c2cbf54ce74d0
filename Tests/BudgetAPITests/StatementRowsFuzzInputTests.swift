@testable import BudgetAPI
@testable import BudgetCore
import Foundation
import Testing

/// The fuzz build (fuzz/run) compiles only whole modules that need nothing beyond the standard library, so the
/// statement-import target stops at the CSV reader; reading records into rows (StatementFormat, StatementRows:
/// lines, import ids, the signs of amounts) answers HTTP problems and lives in BudgetAPI. This suite reads every
/// input the target keeps (its seeds, corpus and reproducers, fuzz/README.md) into rows with the checks the
/// target ran on them, under every format its selector byte can pick.
@Suite("Statement rows of the fuzz inputs")
struct StatementRowsFuzzInputTests {
    @Test func everyKeptInputReadsIntoRowsWithTheirSigns() throws {
        let files = try ListPlanFuzzInputTests.keptInputs(of: "statement-import")
        #expect(files.count > 50, "the target's inputs were not found under \(ListPlanFuzzInputTests.fuzz.path)")
        var rowsRead = 0
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let selector = bytes.first else { continue }
            rowsRead += checkRows(Array(bytes.dropFirst()), format: try Self.format(selector))
        }
        #expect(rowsRead > 10, "only \(rowsRead) rows were read and checked")
    }

    /// One of the formats a bank might use, by the selector's bits.
    static func format(_ selector: UInt8) throws -> StatementFormat {
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
        return try StatementFormat(query: query)
    }

    /// A statement is either refused with errors that name lines of the input, or read into as many rows as it
    /// has records after the header, each with an import id of at most 100 characters, none twice among the
    /// derived ones; a second pass reads the same rows (an import reads its statement twice).
    /// How many rows were read and checked.
    @discardableResult
    func checkRows(_ bytes: [UInt8], format: StatementFormat) -> Int {
        let statement = StatementRows(csv: bytes, format: format)
        var rows: [StatementRows.Row] = []
        let errors = statement.forEachRow { rows.append($0) }
        let lineCount = bytes.count { $0 == 10 || $0 == 13 } + 1
        guard errors.isEmpty else {
            #expect(errors.entries.allSatisfy { (1...lineCount).contains($0.line) }, "an error names a line the input lacks")
            return 0
        }
        guard let records = try? CSVReader.records(bytes, delimiter: format.delimiter) else {
            Issue.record("rows were read from a statement the reader refuses")
            return 0
        }
        #expect(rows.count == records.count - 1, "\(rows.count) rows from \(records.count) records")
        #expect(rows.allSatisfy { (1...100).contains($0.importID.unicodeScalars.count) }, "an import id out of 1...100 characters")
        #expect(rows.allSatisfy { (1...200).contains($0.title.unicodeScalars.count) }, "a title out of 1...200 characters")
        // Without an importId column every id is derived, and the occurrence count keeps them apart.
        if let header = records.first, !header.cells.contains(where: { $0.trimmed.lowercased() == "importid" }) {
            #expect(Set(rows.map(\.importID)).count == rows.count, "a derived import id twice")
        }
        var again: [String] = []
        _ = statement.forEachRow { again.append($0.importID) }
        #expect(again == rows.map(\.importID), "a second pass reads other rows")
        checkSigns(rows, bytes: bytes, header: records.first?.cells ?? [], format: format)
        return rows.count
    }

    /// A derived import id carries the amount as the file writes it (money out negative, for outflow and
    /// inflow columns too): the row's `amount` is its negation in the bank's sense and equal to it in the
    /// budget sense. Read in the other sense, a statement gives the same ids, and the amounts of an amount
    /// column negated, those of outflow and inflow columns unchanged.
    func checkSigns(_ rows: [StatementRows.Row], bytes: [UInt8], header: [String], format: StatementFormat) {
        guard let columns = try? format.columns(ofHeader: header) else {
            Issue.record("rows from a header that is refused")
            return
        }
        let readsFlows = columns.values.contains("outflow")
        #expect(
            readsFlows == columns.values.contains("inflow") && readsFlows != columns.values.contains("amount"),
            "one amount column or two flow columns: \(columns)")
        let isBankSense = readsFlows || format.sense(isCSV: true) == .bank
        if !columns.values.contains("importId") {
            for row in rows {
                guard let cents = row.importID.split(separator: ":").dropLast().last.flatMap({ Int64($0) }) else {
                    Issue.record("a derived import id without cents: \(row.importID)")
                    continue
                }
                #expect(row.amount.cents == (isBankSense ? -cents : cents), "amount \(row.amount) from id \(row.importID)")
            }
        }
        var opposite = format
        opposite.amountSense = format.sense(isCSV: true) == .bank ? .budget : .bank
        var other: [StatementRows.Row] = []
        let errors = StatementRows(csv: bytes, format: opposite).forEachRow { other.append($0) }
        #expect(errors.isEmpty && other.map(\.importID) == rows.map(\.importID), "the other sense reads other rows")
        #expect(zip(other, rows).allSatisfy { $0.amount == (readsFlows ? $1.amount : -$1.amount) }, "the other sense's amounts")
    }
}
