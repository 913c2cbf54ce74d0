import Foundation

/// A budget category as `/categories` answers it (docs/api.md); `record.decode(BudgetCategory.self)`.
///
/// Prefixed because SwiftUI has a `Transaction` of its own, and apps import both.
///
/// Money is `Decimal`, decoded from the number's text, so `400.00` and `3.49` stay exact.
public struct BudgetCategory: Sendable, Hashable, Decodable {
    public var id: Int
    public var title: String
    public var amount: Decimal
    /// Whether what a month leaves carries into the next (`BudgetLedger`).
    public var rollover: Bool
    public var spent: Decimal
    public var remaining: Decimal
    /// UTC timestamps in whole seconds, as the server wrote them (`2026-11-21T08:00:00Z`).
    public var createdAt: String
    public var updatedAt: String
    public var version: Int
}

/// A transaction as `/transactions` answers it (docs/api.md); `record.decode(BudgetTransaction.self)`.
public struct BudgetTransaction: Sendable, Hashable, Decodable {
    public var id: Int
    public var categoryId: Int
    public var title: String
    public var amount: Decimal
    /// A calendar day, `YYYY-MM-DD`: not an instant, so not a `Date`.
    public var date: String
    public var note: String?
    public var createdAt: String
    public var updatedAt: String
    public var version: Int
}

/// A category's budget for one month, in place of its `amount`, as `/budgets` answers it (docs/api.md, Months).
public struct MonthlyBudget: Sendable, Hashable, Decodable {
    public var id: Int
    public var categoryId: Int
    /// `YYYY-MM`.
    public var month: String
    public var amount: Decimal
    public var createdAt: String
    public var updatedAt: String
    public var version: Int
}
