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
            year >= 1, (1...12).contains(month)
        else { return nil }
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

/// An account's balances, as `GET /accounts/{id}` answers them (docs/accounts.md, Balances).
public struct AccountBalances: Sendable, Hashable {
    public var accountId: Int
    /// `openingBalance` − Σ `amount` of all its transactions.
    public var balance: Decimal
    /// `openingBalance` − Σ `amount` of its cleared and reconciled transactions: what the bank should show.
    public var clearedBalance: Decimal
    /// − Σ `amount` of its uncleared transactions; `balance = clearedBalance + unclearedBalance`.
    public var unclearedBalance: Decimal
}

/// A month's totals, as `GET /months/{month}` and each row of `GET /months?from&to` answer them.
public struct MonthSummary: Sendable, Hashable {
    public var month: BudgetMonth
    /// The categories' `CategoryMonth` figures summed.
    public var budgeted: Decimal
    public var spent: Decimal
    public var carried: Decimal
    public var remaining: Decimal
    /// Money that came into on-budget accounts without a category this month (docs/accounts.md).
    public var income: Decimal
    /// Money that left on-budget accounts without a category this month.
    public var uncategorised: Decimal
    /// All income up to this month's end minus what every category was given from its first month through
    /// this one; negative when more was budgeted than came in.
    public var toBeBudgeted: Decimal
    /// The schedules' occurrences in this month not handled yet (from each one's `nextDate`), summed in the
    /// transactions' sense: positive is money still to go out (docs/splits-and-schedules.md).
    public var scheduled: Decimal
}

/// Month figures computed from the records an app holds, with the server's rules (docs/budgetsync.md), so
/// an offline app can show "how much is left this month" without asking the server.
///
/// A month's `carried` is the previous month's `remaining` when the category rolls over. Carrying starts in
/// the category's first month: the earliest of the month of its `createdAt` (as written, in UTC), of its
/// first transaction and of its first budget. Before it a category has no figures: `budgeted` is its
/// `amount`, `carried` and `spent` are 0. `Decimal` keeps every cent exact.
///
/// With accounts (docs/accounts.md) it also answers each account's balances and a month's `income`,
/// `uncategorised` and `toBeBudgeted` (`summary(in:)`), by the money rules the server applies.
///
/// A split (docs/splits-and-schedules.md) counts once on each side: its parts, which carry the categories,
/// in the category and month figures; its parent, which carries the account, in the balances and nowhere
/// else. With schedules it answers their occurrences still to come (`upcoming(days:today:)`) and each
/// month's `scheduled`.
public struct BudgetLedger: Sendable {
    private struct History: Sendable {
        var category: BudgetCategory
        var spent: [Int: Decimal] = [:]
        var overrides: [Int: Decimal] = [:]
        var first: Int?
    }

    private let histories: [Int: History]
    private let balances: [Int: AccountBalances]
    /// Per month index, the income and uncategorised spending of the on-budget accounts.
    private let income: [Int: Decimal]
    private let uncategorised: [Int: Decimal]
    private let schedules: [BudgetSchedule]

    public init(
        categories: [BudgetCategory], transactions: [BudgetTransaction], budgets: [MonthlyBudget], accounts: [BudgetAccount] = [],
        schedules: [BudgetSchedule] = []
    ) {
        self.schedules = schedules
        var histories: [Int: History] = [:]
        for category in categories {
            histories[category.id] = History(category: category, first: BudgetMonth(category.createdAt.prefix(7))?.index)
        }
        func note(_ month: Int, for id: Int) {
            let first = histories[id]?.first
            histories[id]?.first = first.map { min($0, month) } ?? month
        }
        // A split's parent has no category, its parts have one each: the parts count here, as on the server.
        for transaction in transactions {
            guard let categoryID = transaction.categoryId, let month = BudgetMonth(transaction.date.prefix(7))?.index else { continue }
            histories[categoryID]?.spent[month, default: 0] += transaction.amount
            note(month, for: categoryID)
        }
        for budget in budgets {
            guard let month = BudgetMonth(budget.month)?.index else { continue }
            histories[budget.categoryId]?.overrides[month] = budget.amount
            note(month, for: budget.categoryId)
        }
        self.histories = histories

        var balances: [Int: AccountBalances] = [:]
        for account in accounts {
            balances[account.id] = AccountBalances(
                accountId: account.id, balance: account.openingBalance, clearedBalance: account.openingBalance, unclearedBalance: 0)
        }
        // A split's parts have no account, its parent has the account and the total: the parent counts here.
        for transaction in transactions {
            guard let accountID = transaction.accountId, balances[accountID] != nil else { continue }
            balances[accountID]?.balance -= transaction.amount
            if transaction.cleared == .uncleared {
                balances[accountID]?.unclearedBalance -= transaction.amount
            } else {
                balances[accountID]?.clearedBalance -= transaction.amount
            }
        }
        self.balances = balances

        // docs/accounts.md: a transaction counts in the budget's income and uncategorised when its account is
        // on budget, it has no category, and it is not a transfer whose other side is in an on-budget account
        // (money moving inside the budget). An account or other side the app does not hold counts as the
        // server's joins do: an unknown account is not on budget, an unknown other side is not either. A split's
        // parent has no category but is not income or uncategorised: its parts have categories.
        let onBudget = Set(accounts.filter(\.onBudget).map(\.id))
        var accountOfTransaction: [Int: Int] = [:]
        for transaction in transactions {
            if let accountID = transaction.accountId { accountOfTransaction[transaction.id] = accountID }
        }
        var income: [Int: Decimal] = [:], uncategorised: [Int: Decimal] = [:]
        for transaction in transactions {
            guard transaction.categoryId == nil, !transaction.isSplit, let accountID = transaction.accountId, onBudget.contains(accountID),
                let month = BudgetMonth(transaction.date.prefix(7))?.index
            else { continue }
            if let otherSide = transaction.transferId, let otherAccount = accountOfTransaction[otherSide], onBudget.contains(otherAccount) {
                continue
            }
            if transaction.amount < 0 {
                income[month, default: 0] -= transaction.amount
            } else if transaction.amount > 0 {
                uncategorised[month, default: 0] += transaction.amount
            }
        }
        self.income = income
        self.uncategorised = uncategorised
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

    /// The account's balances from the transactions held; nil for an account the ledger does not hold.
    public func balances(of accountID: Int) -> AccountBalances? {
        balances[accountID]
    }

    /// The month's totals over the categories and its income, uncategorised spending and what is left to
    /// budget (docs/accounts.md, Income, uncategorised and what is left to budget).
    public func summary(in month: BudgetMonth) -> MonthSummary {
        let categories = figures(in: month)
        let earned = income.reduce(Decimal(0)) { $1.key <= month.index ? $0 + $1.value : $0 }
        var given: Decimal = 0
        for history in histories.values {
            guard let first = history.first, first <= month.index else { continue }
            // Every month from the category's first through this one: its budget there, else its amount.
            for index in first...month.index {
                given += history.overrides[index] ?? history.category.amount
            }
        }
        return MonthSummary(
            month: month,
            budgeted: categories.reduce(0) { $0 + $1.budgeted }, spent: categories.reduce(0) { $0 + $1.spent },
            carried: categories.reduce(0) { $0 + $1.carried }, remaining: categories.reduce(0) { $0 + $1.remaining },
            income: income[month.index] ?? 0, uncategorised: uncategorised[month.index] ?? 0, toBeBudgeted: earned - given,
            scheduled: scheduled(in: month))
    }

    /// The schedules' occurrences not handled yet up to `days` days after `today`, by date then schedule id:
    /// what `GET /schedules/upcoming?days=` answers when the server's today is `today`.
    ///
    /// An occurrence is still to come from its schedule's `nextDate` on, as the server held it at the last
    /// pull: a due occurrence of an auto-posted schedule stays here until the server posts it and its
    /// `nextDate` moves on.
    public func upcoming(days: Int, today: BudgetDate) -> [ScheduledOccurrence] {
        let through = today.adding(days: days)
        return schedules.flatMap { schedule in
            schedule.pendingOccurrences(through: through).map {
                ScheduledOccurrence(scheduleId: schedule.id, date: $0, title: schedule.title, amount: schedule.amount)
            }
        }
        .sorted { ($0.date, $0.scheduleId) < ($1.date, $1.scheduleId) }
    }

    private func scheduled(in month: BudgetMonth) -> Decimal {
        let start = BudgetDate.clamped(monthIndex: month.index, day: 1), end = BudgetDate.lastDay(ofMonthIndex: month.index)
        var total: Decimal = 0
        for schedule in schedules {
            let count = schedule.pendingOccurrences(through: end).drop { $0 < start }.count
            total += schedule.amount * Decimal(count)
        }
        return total
    }
}
