import BudgetCore
import Testing
@testable import BudgetAPI

@Suite struct MoneyTests {
    @Test(
        arguments: [
            ("12.50", 1250), ("12.5", 1250), ("12", 1200), ("0", 0), ("-0", 0), ("-0.01", -1), ("0.10", 10),
            ("1e2", 10000), ("1E+2", 10000), ("125e-2", 125), ("12.500", 1250), ("999999999999.99", 99_999_999_999_999),
            ("-999999999999.99", -99_999_999_999_999), ("0.0000", 0), ("0e-9999", 0), ("00012.30", 1230),
        ] as [(String, Int64)])
    func parsesExactAmounts(text: String, cents: Int64) throws {
        #expect(try Money(parsing: text).cents == cents)
    }

    @Test(arguments: [
        ("12.345", Money.ParseError.tooManyDecimals), ("0.001", .tooManyDecimals), ("1e-3", .tooManyDecimals),
        ("1000000000000", .outOfRange), ("1e12", .outOfRange), ("1e9999", .outOfRange),
        ("", .notANumber), ("abc", .notANumber), ("NaN", .notANumber), ("Infinity", .notANumber), ("1.", .notANumber),
        (".5", .notANumber), ("1,5", .notANumber), (" 1", .notANumber), ("1e", .notANumber), ("1e99999", .notANumber),
    ])
    func rejectsInexactOrOutOfRangeAmounts(text: String, error: Money.ParseError) {
        #expect(throws: error) { try Money(parsing: text) }
    }

    @Test(arguments: [(1250, "12.50"), (5, "0.05"), (-5, "-0.05"), (-1234, "-12.34"), (0, "0.00"), (100, "1.00")] as [(Int64, String)])
    func rendersTwoDecimals(cents: Int64, text: String) {
        #expect(Money(cents: cents).description == text)
    }
}
