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
