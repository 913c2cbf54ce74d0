@testable import BudgetAPI
import BudgetCore
import Postgres
import Testing

/// Money from a `numeric` column's exact decimal (`PostgresDecimal`, text or binary), never through a float.
@Suite struct MoneyDecimalTests {
    @Test(arguments: [("-12.50", -1250), ("0", 0), ("0.05", 5), ("12.500", 1250), ("123456789012.34", 12_345_678_901_234)] as [(String, Int64)])
    func readsTheCents(text: String, cents: Int64) throws {
        #expect(Money(try #require(PostgresDecimal(text)))?.cents == cents)
    }

    @Test func refusesAFractionOfACent() throws {
        #expect(Money(try #require(PostgresDecimal("0.001"))) == nil)
    }
}
