import BudgetCore
import Postgres

extension Money {
    /// An amount read from a `numeric` column (text or binary, `PostgresDecimal`), exactly: nil when it has a
    /// non-zero digit past the cent or is out of Money's range.
    init?(_ decimal: PostgresDecimal) {
        guard let money = try? Money(parsing: decimal.description) else { return nil }
        self = money
    }
}
