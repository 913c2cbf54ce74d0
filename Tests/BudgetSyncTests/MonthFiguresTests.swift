import BudgetSync
import Foundation
import Testing
import APITestSupport
import BudgetCore
import TestSupport

/// `BudgetLedger` computes a month's figures from the records a client pulled, with the server's rules
/// (docs/budgetsync.md, Month figures offline): here equal to the server's for every category and month of
/// a history with rollover, overrides, refunds and months without transactions.
@Suite struct MonthFiguresTests {
    /// A category's month as `/months/{month}` lists it.
    struct ServerFigures: Decodable, Equatable {
        var id: Int
        var month: String
        var budgeted: Money
        var carried: Money
        var spent: Money
        var remaining: Money
    }

    struct ServerMonth: Decodable {
        var categories: [ServerFigures]
    }

    static let history: [(method: String, path: String, body: String)] = [
        ("POST", "/categories", #"{"title":"Fun","amount":"100.00","rollover":true}"#),
        ("POST", "/categories", #"{"title":"Rent","amount":"250.00"}"#),
        ("POST", "/categories", #"{"title":"Gifts","amount":0,"rollover":true}"#),
        ("POST", "/categories", #"{"title":"Unused","amount":"10.00","rollover":true}"#),
        ("POST", "/categories/1/transactions", #"{"title":"a","amount":"120.00","date":"2025-10-31"}"#),
        ("POST", "/categories/1/transactions", #"{"title":"b","amount":"30.00","date":"2025-12-01"}"#),
        ("POST", "/categories/1/transactions", #"{"title":"refund","amount":"-15.00","date":"2026-01-15"}"#),
        ("POST", "/categories/1/transactions", #"{"title":"c","amount":"99.99","date":"2026-03-31"}"#),
        ("POST", "/categories/2/transactions", #"{"title":"rent","amount":"300.00","date":"2025-11-01"}"#),
        ("POST", "/categories/2/transactions", #"{"title":"fee","amount":"10.00","date":"2026-02-28"}"#),
        ("POST", "/categories/3/transactions", #"{"title":"gift","amount":"5.00","date":"2026-01-02"}"#),
        ("PUT", "/categories/1/budgets/2025-12", #"{"amount":"200.00"}"#),
        ("PUT", "/categories/1/budgets/2026-02", #"{"amount":0}"#),
        ("PUT", "/categories/1/budgets/2026-05", #"{"amount":"7.00"}"#),
        ("PUT", "/categories/2/budgets/2025-11", #"{"amount":"400.00"}"#),
        ("PUT", "/categories/3/budgets/2025-09", #"{"amount":"50.00"}"#),
        // An override deleted mid-history counts nowhere.
        ("DELETE", "/categories/1/budgets/2026-05", ""),
    ]

    @Test func theLedgerAnswersTheServersFiguresForEveryCategoryAndMonth() async throws {
        try await TestApp.with { server in
            for step in Self.history {
                let answer = try await server.request(step.method, step.path, json: step.body.isEmpty ? nil : step.body)
                #expect((200...201).contains(answer.status), "\(step.method) \(step.path): \(answer.text)")
            }
            let (client, store) = try server.makeClient(device: "ledger", collections: ["categories", "transactions", "budgets"])
            try await client.pull()
            let decoder = JSONDecoder()
            let categories = try await store.records(in: "categories").values.map { try $0.decode(BudgetCategory.self, using: decoder) }
            let transactions = try await store.records(in: "transactions").values.map { try $0.decode(BudgetTransaction.self, using: decoder) }
            let budgets = try await store.records(in: "budgets").values.map { try $0.decode(MonthlyBudget.self, using: decoder) }
            #expect(categories.count == 4 && transactions.count == 7 && budgets.count == 4)
            let ledger = BudgetLedger(categories: categories, transactions: transactions, budgets: budgets)

            // From before every first month to after the categories' creation month (this month).
            let first = try #require(Month("2025-07"))
            let created = try #require(Month(String(categories[0].createdAt.prefix(7))))
            var compared = 0
            for offset in 0...((created.year - first.year) * 12 + created.month - first.month + 2) {
                let month = first.adding(offset)
                let answer = try await server.request("GET", "/months/\(month)")
                let expected = try decoder.decode(ServerMonth.self, from: Data(answer.body)).categories
                let computed = ledger.figures(in: month).map {
                    ServerFigures(
                        id: $0.categoryId, month: "\($0.month)", budgeted: $0.budgeted, carried: $0.carried,
                        spent: $0.spent, remaining: $0.remaining)
                }
                #expect(computed == expected, "\(month)")
                compared += expected.count
            }
            #expect(compared >= 4 * 18)
            // Spot checks of the rules themselves: October's debt and December's override carried over the year
            // end, a refund, an override of zero.
            let januaryMonth = try #require(Month("2026-01")), februaryMonth = try #require(Month("2026-02"))
            let january = try #require(ledger.figures(of: 1, in: januaryMonth))
            #expect(january.carried == Money("250.00") && january.spent == Money("-15.00"))
            let february = try #require(ledger.figures(of: 1, in: februaryMonth))
            #expect(february.budgeted == .zero && february.remaining == Money("365.00"))
        }
    }
}
