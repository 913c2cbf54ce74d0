import BudgetSync
import Foundation
import Testing
import APITestSupport
import TestSupport

/// `BudgetLedger` computes each account's balances and a month's `income`, `uncategorised` and
/// `toBeBudgeted` from the records a client pulled, with the server's money rules (docs/accounts.md): here
/// equal to the server's for every account and month of a history with transfers, income, refunds, cleared
/// and reconciled rows, off-budget accounts and splits (docs/splits-and-schedules.md: the parts count in the
/// categories, the parent in the account only).
@Suite struct AccountFiguresTests {
    /// An account's balances as `/accounts/{id}` answers them.
    struct ServerBalances: Decodable, Equatable {
        var id: Int
        var balance: Money
        var clearedBalance: Money
        var unclearedBalance: Money
    }

    static let history: [(method: String, path: String, body: String)] = [
        ("POST", "/accounts", #"{"name":"Checking","type":"checking","openingBalance":"1000.00"}"#),
        ("POST", "/accounts", #"{"name":"Savings","type":"savings","openingBalance":"500.00"}"#),
        ("POST", "/accounts", #"{"name":"Card","type":"credit"}"#),
        ("POST", "/accounts", #"{"name":"Car loan","type":"loan","openingBalance":"-12000.00"}"#),
        ("POST", "/accounts", #"{"name":"Brokerage","type":"investment"}"#),
        ("POST", "/categories", #"{"title":"Groceries","amount":"300.00","rollover":true}"#),
        ("POST", "/categories", #"{"title":"Rent","amount":"800.00"}"#),
        ("POST", "/categories", #"{"title":"Gifts","amount":0,"rollover":true}"#),
        ("POST", "/transactions", #"{"accountId":1,"title":"Salary","amount":"-2500.00","date":"2025-10-01","cleared":"cleared"}"#),
        ("POST", "/transactions", #"{"accountId":1,"title":"Salary","amount":"-2500.00","date":"2025-11-01","cleared":"reconciled"}"#),
        ("POST", "/transactions", #"{"accountId":1,"categoryId":1,"title":"Market","amount":"85.40","date":"2025-10-05","cleared":"cleared"}"#),
        ("POST", "/transactions", #"{"accountId":1,"categoryId":2,"title":"Rent","amount":"800.00","date":"2025-10-02","cleared":"reconciled"}"#),
        ("POST", "/accounts/3/transactions", #"{"categoryId":1,"title":"Supermarket","amount":"120.00","date":"2025-11-12"}"#),
        ("POST", "/accounts/3/transactions", #"{"categoryId":1,"title":"Refund","amount":"-20.00","date":"2025-11-15","cleared":"cleared"}"#),
        ("POST", "/transactions", #"{"accountId":1,"title":"Who knows","amount":"42.00","date":"2025-11-20","payee":"Shop"}"#),
        ("POST", "/transactions", #"{"accountId":1,"title":"Refund without a category","amount":"-15.00","date":"2025-12-03"}"#),
        ("POST", "/transactions", #"{"accountId":5,"title":"Dividend","amount":"-30.00","date":"2025-11-30","cleared":"cleared"}"#),
        ("POST", "/categories/3/transactions", #"{"title":"Present","amount":"25.00","date":"2025-12-10"}"#),
        // Transaction 11 split into 12 and 13; 14 split into 15 to 17, then into 18 and 19 (money back, cleared).
        (
            "POST", "/transactions",
            #"{"accountId":1,"title":"Supermarket","amount":"84.30","date":"2025-11-08","payee":"FreshMart","splits":[{"categoryId":1,"amount":"62.30"},{"categoryId":3,"amount":"22.00","note":"wrapping"}]}"#
        ),
        (
            "POST", "/accounts/3/transactions",
            #"{"title":"Returns","amount":"-30.00","date":"2025-12-05","cleared":"cleared","splits":[{"categoryId":1,"amount":"-20.00"},{"categoryId":2,"amount":"-5.00"},{"categoryId":3,"amount":"-5.00"}]}"#
        ),
        ("PATCH", "/transactions/14", #"{"splits":[{"categoryId":1,"amount":"-18.00"},{"categoryId":3,"amount":"-12.00"}]}"#),
        ("PUT", "/categories/1/budgets/2025-11", #"{"amount":"350.00"}"#),
        ("PUT", "/categories/3/budgets/2025-10", #"{"amount":"50.00"}"#),
        ("PUT", "/categories/2/budgets/2026-01", #"{"amount":"900.00"}"#),
    ]

    /// The transfers, through `POST /transfers` (docs/accounts.md, Transfers), each side then cleared as its
    /// bank saw it; `uncategorised` takes the category off the from side afterwards (the route wants one for
    /// money leaving the budget).
    static let transfers: [(from: Int, to: Int, amount: String, date: String, category: Int?, cleared: String, uncategorised: Bool)] = [
        (1, 2, "400.00", "2025-10-15", nil, "cleared", false),  // inside the budget
        (4, 1, "2000.00", "2025-11-05", nil, "uncleared", false),  // a loan paid out: income
        (1, 4, "300.00", "2025-12-01", 2, "uncleared", false),  // a payment on the loan, in Rent
        (2, 5, "100.00", "2025-12-20", 1, "cleared", true),  // into an investment: uncategorised
    ]

    @Test func theLedgerAnswersTheServersBalancesAndMonthTotals() async throws {
        try await TestApp.with { server in
            for step in Self.history {
                let answer = try await server.request(step.method, step.path, json: step.body)
                #expect((200...201).contains(answer.status), "\(step.method) \(step.path): \(answer.text)")
            }
            for transfer in Self.transfers {
                let categoryMember = transfer.category.map { #","categoryId":\#($0)"# } ?? ""
                let answer = try await server.request(
                    "POST", "/transfers",
                    json: """
                        {"fromAccountId":\(transfer.from),"toAccountId":\(transfer.to),"amount":"\(transfer.amount)","date":"\(transfer.date)"\(categoryMember)}
                        """)
                #expect(answer.status == 201, "\(answer.text)")
                for side in ["from", "to"] {
                    let id = try #require((answer.object[side] as? [String: Any])?["id"] as? Int)
                    let categoryOff = side == "from" && transfer.uncategorised ? #","categoryId":null"# : ""
                    let patched = try await server.request(
                        "PATCH", "/transactions/\(id)", json: #"{"cleared":"\#(transfer.cleared)"\#(categoryOff)}"#)
                    #expect(patched.status == 200, "\(patched.text)")
                }
            }
            #expect(try await server.scalar("SELECT count(*) FROM transactions WHERE transfer_id IS NOT NULL") == "8")
            // Reconciling checking against a statement of its cleared balance locks its cleared rows.
            let clearedBalance = try #require(try await server.request("GET", "/accounts/1").object["clearedBalance"] as? NSNumber)
            let reconciled = try await server.request(
                "POST", "/accounts/1/reconcile", json: #"{"balance":"\#(String(format: "%.2f", clearedBalance.doubleValue))","date":"2025-12-31"}"#)
            #expect(reconciled.status == 200, "\(reconciled.text)")
            #expect(try await server.scalar("SELECT count(*) FROM transactions WHERE account_id = 1 AND cleared = 'reconciled'") == "5")

            let (client, store) = try server.makeClient(
                device: "accounts", collections: ["categories", "transactions", "budgets", "accounts"])
            try await client.pull()
            let decoder = JSONDecoder()
            let accounts = try await store.records(in: "accounts").values.map { try $0.decode(BudgetAccount.self, using: decoder) }
            let categories = try await store.records(in: "categories").values.map { try $0.decode(BudgetCategory.self, using: decoder) }
            let transactions = try await store.records(in: "transactions").values.map { try $0.decode(BudgetTransaction.self, using: decoder) }
            let budgets = try await store.records(in: "budgets").values.map { try $0.decode(MonthlyBudget.self, using: decoder) }
            #expect(accounts.count == 5 && categories.count == 3 && transactions.count == 24 && budgets.count == 3)
            #expect(transactions.filter { $0.categoryId == nil }.count == 14 && transactions.contains { $0.cleared == .reconciled })
            #expect(transactions.filter(\.isSplit).map(\.id).sorted() == [11, 14])
            #expect(transactions.filter { $0.parentId != nil }.map(\.id).sorted() == [12, 13, 18, 19])
            let ledger = BudgetLedger(categories: categories, transactions: transactions, budgets: budgets, accounts: accounts)

            for id in 1...5 {
                let answer = try await server.request("GET", "/accounts/\(id)")
                let expected = try decoder.decode(ServerBalances.self, from: Data(answer.body))
                let computed = try #require(ledger.balances(of: id))
                #expect(
                    ServerBalances(
                        id: computed.accountId, balance: computed.balance, clearedBalance: computed.clearedBalance,
                        unclearedBalance: computed.unclearedBalance) == expected, "account \(id)")
            }
            // The rules by hand for the checking account: 1000.00 + 2500.00 + 2500.00 − 85.40 − 800.00 − 42.00
            // + 15.00 − 400.00 + 2000.00 − 300.00 − 84.30 (the split, once); of it uncleared −42.00 + 15.00
            // + 2000.00 − 300.00 − 84.30.
            let checking = try #require(ledger.balances(of: 1))
            #expect(checking.balance == Money("6303.30") && checking.unclearedBalance == Money("1588.70"))
            #expect(checking.clearedBalance + checking.unclearedBalance == checking.balance)

            // From before anything began to after the categories' creation month (this month).
            let first = try #require(Month("2025-08"))
            let created = try #require(Month(String(categories[0].createdAt.prefix(7))))
            var compared = 0
            for offset in 0...((created.year - first.year) * 12 + created.month - first.month + 1) {
                let month = first.adding(offset)
                let answer = try await server.request("GET", "/months/\(month)")
                #expect(answer.status == 200)
                let expected = try decoder.decode(ServerMonthSummary.self, from: Data(answer.body))
                let computed = ServerMonthSummary(ledger.summary(in: month))
                #expect(computed == expected, "\(month)")
                compared += 1
            }
            #expect(compared >= 17)
            // Spot checks of the rules: November's salary and the loan paid out are income, December's refund
            // without a category too; the transfer into the investment is uncategorised, the one to savings
            // nothing. The splits' parents, without a category, are neither (their parts are categorised). Given by December: Groceries 300 + 350 + 300, Rent 800 × 3, Gifts 50 + 0 + 0.
            let november = ledger.summary(in: try #require(Month("2025-11")))
            #expect(november.income == Money("4500.00") && november.uncategorised == Money("42.00"))
            let december = ledger.summary(in: try #require(Month("2025-12")))
            #expect(december.income == Money("15.00") && december.uncategorised == Money("100.00"))
            #expect(december.toBeBudgeted == Money("3615.00"))
        }
    }
}
