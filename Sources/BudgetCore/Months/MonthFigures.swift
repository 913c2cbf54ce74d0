/// The month-figure and balance rules, in one place for the server's answers and the client library's
/// offline figures (docs/api.md, Months; docs/accounts.md, Balances and Income, uncategorised and what is
/// left to budget; docs/budgetsync.md).
///
/// The server computes the same figures in SQL over all of a ledger's rows (Sources/BudgetAPI/Months); the
/// BudgetSync tests compare what these rules give from the records a client holds with what the server
/// answers, record for record.
///
/// A month's `carried` is the previous month's `remaining` when the category rolls over. Carrying starts in
/// the category's first month: the earliest of the month of its `createdAt` (as written, in UTC), of its
/// first transaction and of its first budget. Before it a category has no figures: `budgeted` is its
/// `amount`, `carried` and `spent` are 0.
///
/// A split (docs/splits-and-schedules.md) counts once on each side: its parts, which carry the categories,
/// in the category and month figures; its parent, which carries the account, in the balances and nowhere
/// else.
public struct MonthFigures: Sendable {
    /// A category as the rules need it.
    public struct Category: Sendable, Hashable {
        public var id: Int
        public var amount: Money
        public var rollover: Bool
        /// The month of its `createdAt`; nil when the record's timestamp does not start with one.
        public var createdIn: Month?

        public init(id: Int, amount: Money, rollover: Bool, createdIn: Month?) {
            (self.id, self.amount, self.rollover, self.createdIn) = (id, amount, rollover, createdIn)
        }
    }

    /// A transaction as the rules need it. `amount` above zero is money out (docs/accounts.md, Signs).
    public struct Transaction: Sendable, Hashable {
        public var id: Int
        public var categoryID: Int?
        public var accountID: Int?
        public var amount: Money
        /// The month of its `date`; nil when the record's date does not start with one.
        public var month: Month?
        /// Cleared or reconciled: the bank has it.
        public var isCleared: Bool
        /// The parent of a split: the account counts it, the categories and months its parts.
        public var isSplit: Bool
        /// For one side of a transfer, the other side's id.
        public var transferID: Int?

        public init(
            id: Int, categoryID: Int?, accountID: Int?, amount: Money, month: Month?, isCleared: Bool, isSplit: Bool, transferID: Int?
        ) {
            (self.id, self.categoryID, self.accountID, self.amount, self.month) = (id, categoryID, accountID, amount, month)
            (self.isCleared, self.isSplit, self.transferID) = (isCleared, isSplit, transferID)
        }
    }

    /// A category's budget for one month, in place of its `amount`.
    public struct Budget: Sendable, Hashable {
        public var categoryID: Int
        public var month: Month
        public var amount: Money

        public init(categoryID: Int, month: Month, amount: Money) {
            (self.categoryID, self.month, self.amount) = (categoryID, month, amount)
        }
    }

    /// An account as the rules need it.
    public struct Account: Sendable, Hashable {
        public var id: Int
        public var openingBalance: Money
        /// Whether money coming into it without a category is income.
        public var onBudget: Bool

        public init(id: Int, openingBalance: Money, onBudget: Bool) {
            (self.id, self.openingBalance, self.onBudget) = (id, openingBalance, onBudget)
        }
    }

    /// A category's figures in one month.
    public struct CategoryFigures: Sendable, Hashable {
        /// The month's budget, else the category's `amount`.
        public var budgeted: Money
        /// With `rollover`, what the previous month left (negative after overspending); else 0.
        public var carried: Money
        /// The sum of the month's transactions (refunds are negative).
        public var spent: Money
        /// `budgeted + carried − spent`.
        public var remaining: Money { budgeted + carried - spent }
    }

    /// An account's balances.
    public struct Balances: Sendable, Hashable {
        /// `openingBalance` − Σ `amount` of all its transactions.
        public var balance: Money
        /// `openingBalance` − Σ `amount` of its cleared and reconciled transactions: what the bank should show.
        public var cleared: Money
        /// − Σ `amount` of its uncleared transactions; `balance = cleared + uncleared`.
        public var uncleared: Money
    }

    private struct History: Sendable {
        var category: Category
        var spent: [Month: Money] = [:]
        var budgets: [Month: Money] = [:]
        var first: Month?

        func budgeted(in month: Month) -> Money { budgets[month] ?? category.amount }
    }

    private let histories: [Int: History]
    private let balances: [Int: Balances]
    /// Per month, the income and uncategorised spending of the on-budget accounts.
    private let income: [Month: Money]
    private let uncategorised: [Month: Money]

    public init(categories: [Category], transactions: [Transaction], budgets: [Budget], accounts: [Account] = []) {
        var histories: [Int: History] = [:]
        for category in categories {
            histories[category.id] = History(category: category, first: category.createdIn)
        }
        func note(_ month: Month, for id: Int) {
            let first = histories[id]?.first
            histories[id]?.first = first.map { min($0, month) } ?? month
        }
        // A split's parent has no category, its parts have one each: the parts count here, as on the server.
        for transaction in transactions {
            guard let categoryID = transaction.categoryID, let month = transaction.month else { continue }
            histories[categoryID]?.spent[month, default: .zero] += transaction.amount
            note(month, for: categoryID)
        }
        for budget in budgets {
            histories[budget.categoryID]?.budgets[budget.month] = budget.amount
            note(budget.month, for: budget.categoryID)
        }
        self.histories = histories

        var balances: [Int: Balances] = [:]
        for account in accounts {
            balances[account.id] = Balances(balance: account.openingBalance, cleared: account.openingBalance, uncleared: .zero)
        }
        // A split's parts have no account, its parent has the account and the total: the parent counts here.
        for transaction in transactions {
            guard let accountID = transaction.accountID, balances[accountID] != nil else { continue }
            balances[accountID]?.balance -= transaction.amount
            if transaction.isCleared {
                balances[accountID]?.cleared -= transaction.amount
            } else {
                balances[accountID]?.uncleared -= transaction.amount
            }
        }
        self.balances = balances

        // docs/accounts.md: a transaction counts in the budget's income and uncategorised when its account is
        // on budget, it has no category, and it is not a transfer whose other side is in an on-budget account
        // (money moving inside the budget). An account or other side not held counts as the server's joins
        // do: an unknown account is not on budget, an unknown other side is not either. A split's parent has
        // no category but is not income or uncategorised: its parts have categories.
        let onBudget = Set(accounts.filter(\.onBudget).map(\.id))
        var accountOfTransaction: [Int: Int] = [:]
        for transaction in transactions {
            if let accountID = transaction.accountID { accountOfTransaction[transaction.id] = accountID }
        }
        var income: [Month: Money] = [:], uncategorised: [Month: Money] = [:]
        for transaction in transactions {
            guard transaction.categoryID == nil, !transaction.isSplit, let accountID = transaction.accountID, onBudget.contains(accountID),
                let month = transaction.month
            else { continue }
            if let otherSide = transaction.transferID, let otherAccount = accountOfTransaction[otherSide], onBudget.contains(otherAccount) {
                continue
            }
            if transaction.amount < .zero {
                income[month, default: .zero] -= transaction.amount
            } else if transaction.amount > .zero {
                uncategorised[month, default: .zero] += transaction.amount
            }
        }
        self.income = income
        self.uncategorised = uncategorised
    }

    /// The ids of the categories held, in order.
    public var categoryIDs: [Int] { histories.keys.sorted() }

    /// The category's figures in `month`; nil for a category not held.
    public func figures(of categoryID: Int, in month: Month) -> CategoryFigures? {
        guard let history = histories[categoryID] else { return nil }
        var carried = Money.zero
        if history.category.rollover, var current = history.first {
            // Each month from the first one up to this one leaves its budget minus its spending.
            while current < month {
                carried += history.budgeted(in: current) - (history.spent[current] ?? .zero)
                current = current.adding(1)
            }
        }
        return CategoryFigures(budgeted: history.budgeted(in: month), carried: carried, spent: history.spent[month] ?? .zero)
    }

    /// The account's balances; nil for an account not held.
    public func balances(of accountID: Int) -> Balances? { balances[accountID] }

    /// Money that came into on-budget accounts without a category in `month`.
    public func income(in month: Month) -> Money { income[month] ?? .zero }

    /// Money that left on-budget accounts without a category in `month`.
    public func uncategorised(in month: Month) -> Money { uncategorised[month] ?? .zero }

    /// All income up to `month`'s end minus what every category was given from its first month through
    /// `month`; negative when more was budgeted than came in.
    public func toBeBudgeted(in month: Month) -> Money {
        var total = Money.zero
        for (incomeMonth, amount) in income where incomeMonth <= month { total += amount }
        for history in histories.values {
            guard var current = history.first else { continue }
            // Every month from the category's first through this one: its budget there, else its amount.
            while current <= month {
                total -= history.budgeted(in: current)
                current = current.adding(1)
            }
        }
        return total
    }
}
