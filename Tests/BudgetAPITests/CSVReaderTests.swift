@testable import BudgetCore
@testable import BudgetAPI
import Testing

/// The RFC 4180 reader and the statement formats of imports (docs/import.md): pure logic, no database.
@Suite struct CSVReaderTests {
    private func records(_ text: String, delimiter: Character = ",") throws -> [CSVReader.Record] {
        try CSVReader.records(Array(text.utf8), delimiter: delimiter.asciiValue!)
    }

    @Test func aRecordIsNamedByTheLineItStartsOn() throws {
        let read = try records("a,b\r\n\"one\ntwo\",x\n\n\"three\r\nfour\r\nfive\",y\nlast,z")
        #expect(
            read == [
                .init(line: 1, cells: ["a", "b"]),
                .init(line: 2, cells: ["one\ntwo", "x"]),
                .init(line: 5, cells: ["three\r\nfour\r\nfive", "y"]),
                .init(line: 8, cells: ["last", "z"]),
            ])
    }

    @Test func quotesDoubledInsideAQuotedCellAreOneQuote() throws {
        #expect(try records(#""say ""hi""",5" screen,"""#) == [.init(line: 1, cells: [#"say "hi""#, #"5" screen"#, ""])])
    }

    @Test func aByteOrderMarkIsSkippedAndCellsKeepTheirSpaces() throws {
        let read = try CSVReader.records(CSVReader.byteOrderMark + Array("date; amount \n 1;2".utf8), delimiter: UInt8(ascii: ";"))
        #expect(read.map(\.cells) == [["date", " amount "], [" 1", "2"]])
    }

    @Test(arguments: [
        ("a,b\n\"open,x\n", CSVReader.Failure.unterminatedQuote(line: 2)),
        ("a,b\n1,2\n\"x\"y,1\n", .textAfterQuote(line: 3)),
        ("a,b\n1,\u{0}\n", .nul(line: 2)),
    ])
    func aMalformedFileNamesItsLine(text: String, failure: CSVReader.Failure) {
        #expect(throws: failure) { try records(text) }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: CSVReader.Failure.notUTF8(line: 2)) { try CSVReader.records(Array("a\n".utf8) + [0xC3, 0x28]) }
    }

    @Test(arguments: [
        ("-12.50", ".", "-12.50"), ("-12,50", ",", "-12.50"), ("1.234,56", ",", "1234.56"), ("-1.234.567,8", ",", "-1234567.8"),
        ("1.234", ",", "1234"), ("-12.50", ",", "-12.50"), (" 3,2 ", ",", "3.2"),
    ])
    func amountsAreReadInTheStatementsFormat(cell: String, decimal: String, expected: String) throws {
        let format = try StatementFormat(query: [("decimal", decimal)])
        #expect(format.amountText(cell) == expected)
    }

    @Test func anAmountWithMisplacedGroupsIsRefused() throws {
        let format = try StatementFormat(query: [("decimal", ",")])
        #expect(format.amountText("1.23,4") == nil)
        #expect(format.amountText("") == nil)
    }

    @Test(arguments: [
        ("DD.MM.YYYY", "31.12.2026", "2026-12-31"), ("MM/DD/YYYY", "2/29/2028", "2028-02-29"), ("YYYY-MM-DD", "2026-11-05", "2026-11-05"),
        ("DD.MM.YYYY", "29.02.2026", nil), ("MM/DD/YYYY", "13/01/2026", nil), ("DD.MM.YYYY", "1.1.26", nil),
    ])
    func datesAreReadInTheStatementsFormat(pattern: String, cell: String, expected: String?) throws {
        let format = try StatementFormat(query: [("dateFormat", pattern)])
        #expect(format.day(cell) == expected)
    }

    @Test func anExportsFormulaQuoteIsDroppedOnlyBeforeAFormulaCharacter() {
        #expect(CSVText.undefused("'=SUM(A1)") == "=SUM(A1)")
        #expect(CSVText.undefused("'-5") == "-5")
        #expect(CSVText.undefused("'tab\t") == "'tab\t")
        #expect(CSVText.undefused("'") == "'")
        #expect(CSVText.undefused("''=x") == "'=x", "a text that starts with '= was exported with one more quote")
    }
}
