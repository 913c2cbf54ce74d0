import Foundation

/// A month written `YYYY-MM`, as the server's months are (docs/api.md, Months).
public struct BudgetMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Months counted from January of year 0.
    let index: Int

    /// Exactly `YYYY-MM`, with a month from 01 to 12.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 7, bytes[4] == UInt8(ascii: "-"),
              bytes.enumerated().allSatisfy({ $0.offset == 4 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0.element) }),
              let year = Int(String(decoding: bytes[0..<4], as: UTF8.self)),
              let month = Int(String(decoding: bytes[5..<7], as: UTF8.self)),
              year >= 1, (1...12).contains(month) else { return nil }
        index = year * 12 + month - 1
    }

    init(index: Int) { self.index = index }

    public var year: Int { index / 12 }
    public var month: Int { index % 12 + 1 }

    /// The month `count` months later (earlier when negative).
    public func adding(_ count: Int) -> BudgetMonth { BudgetMonth(index: index + count) }

    public var description: String {
        let year = String(self.year), month = String(self.month)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + "-" + (month.count < 2 ? "0" : "") + month
    }

    public static func < (lhs: BudgetMonth, rhs: BudgetMonth) -> Bool { lhs.index < rhs.index }
}

/// A category's figures in one month, as `GET /categories/{id}?month=` answers them.
public struct CategoryMonth: Sendable, Hashable {
    public var categoryId: Int
    public var month: BudgetMonth
    /// The month's budget: its `MonthlyBudget`, else the category's `amount`.
    public var budgeted: Decimal
    /// With `rollover`, what the previous month left (negative after overspending); else 0.
    public var carried: Decimal
    /// The sum of the month's transactions (refunds are negative).
    public var spent: Decimal
    /// `budgeted + carried − spent`.
    public var remaining: Decimal
}

/// Month figures computed from the records an app holds, with the server's rules (docs/budgetsync.md), so
/// an offline app can show "how much is left this month" without asking the server.
///
/// A month's `carried` is the previous month's `remaining` when the category rolls over. Carrying starts in
/// the category's first month: the earliest of the month of its `createdAt` (as written, in UTC), of its
/// first transaction and of its first budget. Before it a category has no figures: `budgeted` is its
/// `amount`, `carried` and `spent` are 0. `Decimal` keeps every cent exact.
public struct BudgetLedger: Sendable {
    private struct History: Sendable {
        var category: BudgetCategory
        var spent: [Int: Decimal] = [:]
        var overrides: [Int: Decimal] = [:]
        var first: Int?
    }

    private let histories: [Int: History]

    public init(categories: [BudgetCategory], transactions: [BudgetTransaction], budgets: [MonthlyBudget]) {
        var histories: [Int: History] = [:]
        for category in categories {
            histories[category.id] = History(category: category, first: BudgetMonth(category.createdAt.prefix(7))?.index)
        }
        func note(_ month: Int, for id: Int) {
            let first = histories[id]?.first
            histories[id]?.first = first.map { min($0, month) } ?? month
        }
        for transaction in transactions {
            guard let month = BudgetMonth(transaction.date.prefix(7))?.index else { continue }
            histories[transaction.categoryId]?.spent[month, default: 0] += transaction.amount
            note(month, for: transaction.categoryId)
        }
        for budget in budgets {
            guard let month = BudgetMonth(budget.month)?.index else { continue }
            histories[budget.categoryId]?.overrides[month] = budget.amount
            note(month, for: budget.categoryId)
        }
        self.histories = histories
    }

    /// The category's figures in `month`; nil for a category the ledger does not hold.
    public func figures(of categoryID: Int, in month: BudgetMonth) -> CategoryMonth? {
        guard let history = histories[categoryID] else { return nil }
        func budgeted(_ index: Int) -> Decimal { history.overrides[index] ?? history.category.amount }
        var carried: Decimal = 0
        if history.category.rollover, let first = history.first {
            // Each month from the first one up to this one leaves its budget minus its spending.
            for index in first..<max(first, month.index) {
                carried += budgeted(index) - (history.spent[index] ?? 0)
            }
        }
        let spent = history.spent[month.index] ?? 0
        let budget = budgeted(month.index)
        return CategoryMonth(
            categoryId: categoryID, month: month, budgeted: budget, carried: carried, spent: spent,
            remaining: budget + carried - spent)
    }

    /// Every category's figures in `month`, by id, as `GET /months/{month}` lists them.
    public func figures(in month: BudgetMonth) -> [CategoryMonth] {
        histories.keys.sorted().compactMap { figures(of: $0, in: month) }
    }
}
