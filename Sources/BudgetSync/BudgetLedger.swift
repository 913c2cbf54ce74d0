import BudgetCore
import Foundation

/// A category's figures in one month, as `GET /categories/{id}?month=` answers them.
public struct CategoryMonth: Sendable, Hashable {
    public var categoryId: Int
    public var month: Month
    /// The month's budget: its `MonthlyBudget`, else the category's `amount`.
    public var budgeted: Money
    /// With `rollover`, what the previous month left (negative after overspending); else 0.
    public var carried: Money
    /// The sum of the month's transactions (refunds are negative).
    public var spent: Money
    /// `budgeted + carried − spent`.
    public var remaining: Money
}

/// An account's balances, as `GET /accounts/{id}` answers them (docs/accounts.md, Balances).
public struct AccountBalances: Sendable, Hashable {
    public var accountId: Int
    /// `openingBalance` − Σ `amount` of all its transactions.
    public var balance: Money
    /// `openingBalance` − Σ `amount` of its cleared and reconciled transactions: what the bank should show.
    public var clearedBalance: Money
    /// − Σ `amount` of its uncleared transactions; `balance = clearedBalance + unclearedBalance`.
    public var unclearedBalance: Money
}

/// A month's totals, as `GET /months/{month}` and each row of `GET /months?from&to` answer them.
public struct MonthSummary: Sendable, Hashable {
    public var month: Month
    /// The categories' `CategoryMonth` figures summed.
    public var budgeted: Money
    public var spent: Money
    public var carried: Money
    public var remaining: Money
    /// Money that came into on-budget accounts without a category this month (docs/accounts.md).
    public var income: Money
    /// Money that left on-budget accounts without a category this month.
    public var uncategorised: Money
    /// All income up to this month's end minus what every category was given from its first month through
    /// this one; negative when more was budgeted than came in.
    public var toBeBudgeted: Money
    /// The schedules' occurrences in this month not handled yet (from each one's `nextDate`), summed in the
    /// transactions' sense: positive is money still to go out (docs/splits-and-schedules.md).
    public var scheduled: Money
}

/// Month figures computed from the records an app holds, with the server's rules (docs/budgetsync.md), so
/// an offline app can show "how much is left this month" without asking the server.
///
/// The rules are BudgetCore's `MonthFigures`, the one definition of carrying, balances, income and what is
/// left to budget: a month's `carried` is the previous month's `remaining` when the category rolls over,
/// from the category's first month (the earliest of the month of its `createdAt`, as written, in UTC, of its
/// first transaction and of its first budget). Before it a category has no figures: `budgeted` is its
/// `amount`, `carried` and `spent` are 0. `Money` keeps every cent exact.
///
/// With accounts (docs/accounts.md) it also answers each account's balances and a month's `income`,
/// `uncategorised` and `toBeBudgeted` (`summary(in:)`), by the money rules the server applies.
///
/// A split (docs/splits-and-schedules.md) counts once on each side: its parts, which carry the categories,
/// in the category and month figures; its parent, which carries the account, in the balances and nowhere
/// else. With schedules it answers their occurrences still to come (`upcoming(days:today:)`) and each
/// month's `scheduled`.
public struct BudgetLedger: Sendable {
    private let figures: MonthFigures
    private let schedules: [BudgetSchedule]

    public init(
        categories: [BudgetCategory], transactions: [BudgetTransaction], budgets: [MonthlyBudget], accounts: [BudgetAccount] = [],
        schedules: [BudgetSchedule] = []
    ) {
        self.schedules = schedules
        // Months as the records write them: a date or timestamp starts with its `YYYY-MM`; one that does not
        // counts in no month.
        figures = MonthFigures(
            categories: categories.map {
                MonthFigures.Category(id: $0.id, amount: $0.amount, rollover: $0.rollover, createdIn: Month(String($0.createdAt.prefix(7))))
            },
            transactions: transactions.map {
                MonthFigures.Transaction(
                    id: $0.id, categoryID: $0.categoryId, accountID: $0.accountId, amount: $0.amount, month: Month(String($0.date.prefix(7))),
                    isCleared: $0.cleared != .uncleared, isSplit: $0.isSplit, transferID: $0.transferId)
            },
            budgets: budgets.compactMap { budget in
                Month(budget.month).map { MonthFigures.Budget(categoryID: budget.categoryId, month: $0, amount: budget.amount) }
            },
            accounts: accounts.map { MonthFigures.Account(id: $0.id, openingBalance: $0.openingBalance, onBudget: $0.onBudget) })
    }

    /// The category's figures in `month`; nil for a category the ledger does not hold.
    public func figures(of categoryID: Int, in month: Month) -> CategoryMonth? {
        figures.figures(of: categoryID, in: month).map {
            CategoryMonth(
                categoryId: categoryID, month: month, budgeted: $0.budgeted, carried: $0.carried, spent: $0.spent, remaining: $0.remaining)
        }
    }

    /// Every category's figures in `month`, by id, as `GET /months/{month}` lists them.
    public func figures(in month: Month) -> [CategoryMonth] {
        figures.categoryIDs.compactMap { figures(of: $0, in: month) }
    }

    /// The account's balances from the transactions held; nil for an account the ledger does not hold.
    public func balances(of accountID: Int) -> AccountBalances? {
        figures.balances(of: accountID).map {
            AccountBalances(accountId: accountID, balance: $0.balance, clearedBalance: $0.cleared, unclearedBalance: $0.uncleared)
        }
    }

    /// The month's totals over the categories and its income, uncategorised spending and what is left to
    /// budget (docs/accounts.md, Income, uncategorised and what is left to budget).
    public func summary(in month: Month) -> MonthSummary {
        let categories = figures(in: month)
        func total(_ figure: KeyPath<CategoryMonth, Money>) -> Money { categories.reduce(.zero) { $0 + $1[keyPath: figure] } }
        return MonthSummary(
            month: month, budgeted: total(\.budgeted), spent: total(\.spent), carried: total(\.carried), remaining: total(\.remaining),
            income: figures.income(in: month), uncategorised: figures.uncategorised(in: month), toBeBudgeted: figures.toBeBudgeted(in: month),
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

    private func scheduled(in month: Month) -> Money {
        let start = BudgetDate.clamped(monthIndex: month.index, day: 1), end = BudgetDate.lastDay(ofMonthIndex: month.index)
        var total = Money.zero
        for schedule in schedules {
            let count = schedule.pendingOccurrences(through: end).drop { $0 < start }.count
            total += schedule.amount * count
        }
        return total
    }
}
