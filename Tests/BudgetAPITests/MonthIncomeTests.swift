import Foundation
import Testing
import APITestSupport
import BudgetCore
import TestSupport

/// A month's `income`, `uncategorised` and `toBeBudgeted` (docs/accounts.md, Income, uncategorised and what
/// is left to budget) on `GET /months/{m}` and `GET /months?from&to`, over a history with transfers, a loan
/// paid out into checking, an off-budget account, refunds, overrides and a category that starts late.
@Suite struct MonthIncomeTests {
    /// The eight summary members of a month, as the server wrote them.
    struct Summary: Equatable, CustomStringConvertible {
        var month: String
        var budgeted, spent, carried, remaining, income, uncategorised, toBeBudgeted: String

        init(_ object: [String: Any]) {
            func money(_ name: String) -> String {
                guard let number = object[name] as? NSNumber else { return "missing \(name)" }
                return String(format: "%.2f", number.doubleValue)
            }
            month = object["month"] as? String ?? "missing month"
            (budgeted, spent, carried, remaining) = (money("budgeted"), money("spent"), money("carried"), money("remaining"))
            (income, uncategorised, toBeBudgeted) = (money("income"), money("uncategorised"), money("toBeBudgeted"))
        }

        init(_ month: String, income: String, uncategorised: String, toBeBudgeted: String) {
            self.month = month
            (budgeted, spent, carried, remaining) = ("", "", "", "")
            (self.income, self.uncategorised, self.toBeBudgeted) = (income, uncategorised, toBeBudgeted)
        }

        /// Only what accounts brought, for comparing with the rules' figures.
        var incomeFigures: [String] { [month, income, uncategorised, toBeBudgeted] }

        var description: String { "\(month) \(budgeted)/\(spent)/\(carried)/\(remaining) +\(income) ?\(uncategorised) =\(toBeBudgeted)" }
    }

    static func post(_ app: TestApp, _ path: String, _ json: String) async throws {
        let answer = try await app.request("POST", path, json: json)
        #expect(answer.status == 201, "POST \(path) \(json): \(answer.text)")
    }

    /// A transfer through `POST /transfers` (docs/accounts.md, Transfers): the from side `amount`, the to side
    /// its negative, `category` on the from side. Answers the from side's id.
    @discardableResult
    static func transfer(_ app: TestApp, from: Int, to: Int, amount: String, date: String, category: Int? = nil) async throws -> Int {
        let categoryMember = category.map { #","categoryId":\#($0)"# } ?? ""
        let answer = try await app.request(
            "POST", "/transfers",
            json: """
                {"fromAccountId":\(from),"toAccountId":\(to),"amount":"\(amount)","date":"\(date)"\(categoryMember)}
                """)
        #expect(answer.status == 201, "transfer \(from) → \(to): \(answer.text)")
        let fromSide = try #require(answer.object["from"] as? [String: Any])
        return try #require(fromSide["id"] as? Int)
    }

    static func month(_ app: TestApp, _ month: String) async throws -> TestResponse {
        let answer = try await app.request("GET", "/months/\(month)")
        #expect(answer.status == 200, "\(month): \(answer.text)")
        return answer
    }

    /// Accounts 1 Checking, 2 Savings (both on budget), 3 Mortgage (a loan) and 4 Brokerage (both off);
    /// categories 1 Rent (500.00, first month 2025-02 by its first transaction), 2 Fun (100.00, first month
    /// 2025-01 by an override of 40.00, 0.00 in 2025-03) and 3 Later (1000.00, nothing before it was created,
    /// this month, so it counts in no month of 2025).
    static func withHistory(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with { app in
            for account in [
                #"{"name":"Checking","type":"checking"}"#, #"{"name":"Savings","type":"savings"}"#,
                #"{"name":"Mortgage","type":"loan","openingBalance":"-100000.00"}"#,
                #"{"name":"Brokerage","type":"investment"}"#,
            ] {
                try await post(app, "/accounts", account)
            }
            for category in [
                #"{"title":"Rent","amount":"500.00"}"#, #"{"title":"Fun","amount":"100.00"}"#,
                #"{"title":"Later","amount":"1000.00"}"#,
            ] {
                try await post(app, "/categories", category)
            }
            #expect(try await app.request("PUT", "/categories/2/budgets/2025-01", json: #"{"amount":"40.00"}"#).status == 201)
            #expect(try await app.request("PUT", "/categories/2/budgets/2025-03", json: #"{"amount":0}"#).status == 201)
            for transaction in [
                #"{"accountId":1,"title":"Salary","amount":"-2000.00","date":"2025-01-15"}"#,
                #"{"accountId":1,"title":"Cash machine","amount":"25.00","date":"2025-01-20"}"#,
                #"{"accountId":1,"title":"Salary","amount":"-2000.00","date":"2025-02-01"}"#,
                #"{"accountId":1,"categoryId":1,"title":"Rent","amount":"480.00","date":"2025-02-03"}"#,
                #"{"accountId":4,"title":"Dividend","amount":"-75.00","date":"2025-02-15"}"#,
                #"{"accountId":1,"categoryId":2,"title":"Refund","amount":"-5.00","date":"2025-02-20"}"#,
                #"{"accountId":1,"title":"Unknown","amount":"10.00","date":"2025-03-05"}"#,
                // Before accounts: a category's transaction with no account is that category's, whatever its sign.
                #"{"categoryId":2,"title":"Returned","amount":"-7.00","date":"2025-01-25"}"#,
            ] {
                try await post(app, "/transactions", transaction)
            }
            // Inside the budget: counted in neither.
            try await transfer(app, from: 1, to: 2, amount: "300.00", date: "2025-02-10")
            // A loan paid out into checking, without a category: income.
            try await transfer(app, from: 3, to: 1, amount: "1000.00", date: "2025-02-12")
            // A mortgage payment out of checking in the Rent category: Rent's spending, and the loan's side is off budget.
            try await transfer(app, from: 1, to: 3, amount: "200.00", date: "2025-03-07", category: 1)
            // Money out of the budget into an investment whose category was taken off afterwards: uncategorised.
            let investment = try await transfer(app, from: 1, to: 4, amount: "50.00", date: "2025-03-09", category: 2)
            let uncategorised = try await app.request("PATCH", "/transactions/\(investment)", json: #"{"categoryId":null}"#)
            #expect(uncategorised.status == 200, "\(uncategorised.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE transfer_id IS NOT NULL AND category_id IS NULL") == "7")
            try await body(app)
        }
    }

    /// The rules by hand. Income through each month: 2000.00 in January; 2000.00 of salary and 1000.00 of loan
    /// in February. Given by the categories through each month: Fun 40.00 (January), 100.00, 0.00, then 100.00
    /// a month; Rent 500.00 a month from February; Later nothing in 2025.
    static let expected: [Summary] = [
        Summary("2024-12", income: "0.00", uncategorised: "0.00", toBeBudgeted: "0.00"),
        Summary("2025-01", income: "2000.00", uncategorised: "25.00", toBeBudgeted: "1960.00"),
        Summary("2025-02", income: "3000.00", uncategorised: "0.00", toBeBudgeted: "4360.00"),
        Summary("2025-03", income: "0.00", uncategorised: "60.00", toBeBudgeted: "3860.00"),
        Summary("2025-04", income: "0.00", uncategorised: "0.00", toBeBudgeted: "3260.00"),
        Summary("2025-05", income: "0.00", uncategorised: "0.00", toBeBudgeted: "2660.00"),
    ]

    @Test func incomeCountsInItsMonthAndCarriesIntoToBeBudgeted() async throws {
        try await Self.withHistory { app in
            for expected in Self.expected {
                let answer = try await Self.month(app, expected.month)
                #expect(Summary(answer.object).incomeFigures == expected.incomeFigures, "\(answer.text.prefix(220))")
            }
            // More budgeted than ever came in: by November 2025 Rent was given 10 × 500.00 and Fun 940.00.
            let november = Summary(try await Self.month(app, "2025-11").object)
            #expect(november.incomeFigures == ["2025-11", "0.00", "0.00", "-940.00"])
        }
    }

    /// Each row of a range is the month's own summary, the first month of the range included (what came
    /// before it is carried in), and a range may start after everything began.
    @Test func rangeRowsEqualTheMonthsOwnSummaries() async throws {
        try await Self.withHistory { app in
            for (from, to) in [("2024-12", "2025-05"), ("2025-03", "2025-04"), ("2025-02", "2025-02")] {
                let range = try await app.request("GET", "/months?from=\(from)&to=\(to)")
                #expect(range.status == 200, "\(range.text)")
                var months: [Summary] = []
                for row in range.array {
                    let month = try await Self.month(app, row["month"] as? String ?? "")
                    months.append(Summary(month.object))
                }
                #expect(range.array.map(Summary.init) == months, "\(from)…\(to)")
                #expect(!months.isEmpty)
            }
            let range = try await app.request("GET", "/months?from=2024-12&to=2025-05")
            #expect(range.array.map { Summary($0).incomeFigures } == Self.expected.map(\.incomeFigures))
        }
    }

    /// What the months answered before accounts is still there, in its place: the category figures ignore
    /// transactions without a category, and the three new members follow `remaining`.
    @Test func theOldMembersKeepTheirValuesAndPlaces() async throws {
        try await Self.withHistory { app in
            let february = try await Self.month(app, "2025-02")
            // Rent spent 480.00, Fun −5.00; income and transfers are in no category.
            #expect(
                february.text.hasPrefix(
                    #"{"month":"2025-02","budgeted":1600.00,"spent":475.00,"carried":0.00,"remaining":1125.00,"income":3000.00,"uncategorised":0.00,"toBeBudgeted":4360.00,"scheduled":0.00,"categories":[{"id":1,"#
                ),
                "\(february.text)")
            let categories = try #require(february.object["categories"] as? [[String: Any]])
            #expect(categories.map { $0["id"] as? Int } == [1, 2, 3])
            for id in 1...3 {
                let one = try await app.request("GET", "/categories/\(id)?month=2025-02")
                #expect(february.text.contains(one.text), "category \(id) as /categories/\(id)?month= answers it")
            }
            let january = try await app.request("GET", "/months?from=2025-01&to=2025-01")
            #expect(
                january.text
                    == #"[{"month":"2025-01","budgeted":1540.00,"spent":-7.00,"carried":0.00,"remaining":1547.00,"income":2000.00,"uncategorised":25.00,"toBeBudgeted":1960.00,"scheduled":0.00}]"#
            )
        }
    }

    /// An account's `onBudget` decides how all of its transactions count, past months included: with Savings
    /// off budget, February's transfer into it is money leaving the budget that no category carries.
    @Test func takingAnAccountOffBudgetRecountsItsPast() async throws {
        try await Self.withHistory { app in
            let patched = try await app.request("PATCH", "/accounts/2", json: #"{"onBudget":false}"#)
            #expect(patched.status == 200, "\(patched.text)")
            let february = Summary(try await Self.month(app, "2025-02").object)
            #expect(february.incomeFigures == ["2025-02", "3000.00", "300.00", "4360.00"])
            // Checking off budget too: its salary is no longer income, nor the loan paid into it.
            #expect(try await app.request("PATCH", "/accounts/1", json: #"{"onBudget":false}"#).status == 200)
            let after = try await app.request("GET", "/months?from=2025-01&to=2025-02")
            #expect(
                after.array.map { Summary($0).incomeFigures } == [
                    ["2025-01", "0.00", "0.00", "-40.00"], ["2025-02", "0.00", "0.00", "-640.00"],
                ])
        }
    }

    /// A second ledger's accounts and income stay out of the first's months.
    @Test func anotherLedgersIncomeDoesNotCount() async throws {
        try await Self.withHistory { app in
            _ = try await app.scalar("INSERT INTO ledgers (id, name) VALUES (2, 'Other')")
            _ = try await app.scalar("INSERT INTO accounts (ledger_id, id, name, type, on_budget) VALUES (2, 1, 'Theirs', 'checking', true)")
            _ = try await app.scalar(
                """
                INSERT INTO transactions (ledger_id, id, account_id, title, amount, date)
                VALUES (2, 1, 1, 'Their salary', -9999.00, '2025-02-01'), (2, 2, 1, 'Their spending', 99.00, '2025-02-02')
                """)
            #expect(try await app.scalar("SELECT count(*) FROM transactions WHERE ledger_id = 2") == "2")
            let february = Summary(try await Self.month(app, "2025-02").object)
            #expect(february.incomeFigures == ["2025-02", "3000.00", "0.00", "4360.00"])
            let range = try await app.request("GET", "/months?from=2025-02&to=2025-03")
            #expect(
                range.array.map { Summary($0).incomeFigures } == [
                    ["2025-02", "3000.00", "0.00", "4360.00"], ["2025-03", "0.00", "60.00", "3860.00"],
                ])
        }
    }
}
