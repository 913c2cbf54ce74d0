/// Sums and differences of amounts, exact in cents: the month figures and balances add amounts up
/// (`MonthFigures`). Every amount is within `maximumCents`, so the sums of a ledger stay far inside `Int64`.
extension Money: AdditiveArithmetic {
    public static let zero = Money(cents: 0)

    public static func + (lhs: Money, rhs: Money) -> Money { Money(cents: lhs.cents + rhs.cents) }

    public static func - (lhs: Money, rhs: Money) -> Money { Money(cents: lhs.cents - rhs.cents) }

    /// `count` times the amount, e.g. a schedule's amount over its occurrences in a month.
    public static func * (lhs: Money, rhs: Int) -> Money { Money(cents: lhs.cents * Int64(rhs)) }
}

/// `Money("12.50")`: the decimal text of a JSON number or string, as `init(parsing:)` reads it; nil when that
/// throws.
extension Money: LosslessStringConvertible {
    public init?(_ description: String) {
        guard let money = try? Money(parsing: description) else { return nil }
        self = money
    }
}
