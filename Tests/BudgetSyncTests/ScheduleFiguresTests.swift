import BudgetAPI
import BudgetSync
import Foundation
import Postgres
import Testing
import APITestSupport
import TestSupport

/// BudgetSync's schedule date rules and offline figures are the server's (docs/splits-and-schedules.md):
/// the rules equal to `schedule_occurrences` and `schedule_next_date` in PostgreSQL for every frequency across
/// month ends, leap years and year ends, and `BudgetLedger.upcoming(days:today:)` and a month's `scheduled`
/// equal to `GET /schedules/upcoming` and `GET /months/{m}` over schedules a client pulled.
@Suite struct ScheduleFiguresTests {
    /// First dates that meet every edge: a leap day, the 31st, the 30th, the 29th, a year's last and first
    /// day, February's last day in a common year, the 15th.
    static let firstDates = [
        "2024-02-29", "2026-01-31", "2026-01-30", "2026-01-29", "2026-12-31", "2027-01-01", "2027-02-28", "2026-05-15",
        "2026-11-30", "2027-12-15", "2028-03-31",
    ]

    /// (after, through, end) windows: everything from the first date, a window over a leap February, a
    /// window over a year end, an after past the end, one day.
    static let windows: [(after: String?, through: String, end: String?)] = [
        (nil, "2030-03-01", nil),
        ("2027-12-30", "2028-03-02", nil),
        ("2026-12-30", "2027-01-31", "2027-01-15"),
        ("2028-02-28", "2028-02-29", nil),
        (nil, "2029-12-31", "2028-02-29"),
        ("2031-01-01", "2031-12-31", "2030-06-30"),
    ]

    struct Case {
        var frequency: ScheduleFrequency
        var first: String
        var window: (after: String?, through: String, end: String?)
    }

    static var cases: [Case] {
        ScheduleFrequency.allCases.flatMap { frequency in
            firstDates.flatMap { first in windows.map { Case(frequency: frequency, first: first, window: $0) } }
        }
    }

    static func day(_ text: String) throws -> BudgetDate { try #require(BudgetDate(text)) }

    static func sqlDate(_ text: String?) -> String { text.map { "DATE '\($0)'" } ?? "NULL::date" }

    @Test func theDateRulesAreTheDatabases() async throws {
        let cases = Self.cases
        #expect(cases.count == 13 * 11 * 6)
        // One statement: each case's occurrences and next date, in case order, one line each.
        let rows = cases.enumerated().map { index, item in
            "(\(index), '\(item.frequency.rawValue)', DATE '\(item.first)', \(Self.sqlDate(item.window.end)), "
                + "\(Self.sqlDate(item.window.after)), DATE '\(item.window.through)')"
        }
        let sql = """
            SELECT string_agg(o.days || '|' || coalesce(schedule_next_date(v.f, v.first, v.last, v.after)::text, 'none'), E'\\n' ORDER BY v.n)
            FROM (VALUES \(rows.joined(separator: ", "))) v(n, f, first, last, after, through)
            CROSS JOIN LATERAL (SELECT coalesce(string_agg(d::text, ',' ORDER BY d), '') AS days
                                FROM schedule_occurrences(v.f, v.first, v.last, v.after, v.through) d) o
            """
        try await TestApp.with { server in
            let answer = try #require(try await server.scalar(sql))
            let lines = answer.split(separator: "\n", omittingEmptySubsequences: false)
            try #require(lines.count == cases.count)
            var occurrences = 0
            for (item, line) in zip(cases, lines) {
                let first = try Self.day(item.first)
                let end = try item.window.end.map(Self.day), after = try item.window.after.map(Self.day)
                let days = item.frequency.occurrences(firstDate: first, endDate: end, after: after, through: try Self.day(item.window.through))
                let next = item.frequency.nextDate(firstDate: first, endDate: end, after: after)
                let computed = days.map(\.description).joined(separator: ",") + "|" + (next?.description ?? "none")
                #expect(computed == String(line), "\(item.frequency) from \(item.first), window \(item.window)")
                occurrences += days.count
            }
            // The windows are not empty by accident: every frequency has its dates compared.
            #expect(occurrences > 13 * 11 * 3)
        }
    }

    /// The day the server takes as today in `theLedgerAnswersTheServersUpcomingAndScheduled`: late in a year,
    /// so that the windows cross a year end and the leap February of 2028.
    static let today = "2027-12-20"

    /// Schedules of every frequency from first dates before, on and after today (month ends, a leap day), some
    /// ending, some split, half posted by the server and half manual, in money in and out.
    static func scheduleBodies() -> [String] {
        let firsts = ["2027-01-31", "2027-11-30", "2027-12-20", "2027-12-31", "2028-02-29", "2026-02-28"]
        var bodies: [String] = []
        for (f, frequency) in ScheduleFrequency.allCases.enumerated() {
            for (d, first) in firsts.enumerated() {
                let n = f * firsts.count + d
                // Day steps from far back would post hundreds of transactions each: they start this year.
                if ["daily", "weekly"].contains(frequency.rawValue) && first < "2027-11-01" { continue }
                let amount = n % 3 == 0 ? "-\(1000 + n).00" : "\(10 + n).25"
                var members = [
                    #""title":"s\#(n)""#, #""amount":"\#(amount)""#, #""accountId":\#(n % 2 + 1)"#,
                    #""frequency":"\#(frequency.rawValue)""#, #""firstDate":"\#(first)""#, #""autoPost":\#(n % 2 == 0)"#,
                ]
                if n % 4 == 1 {
                    members.append(#""endDate":"2028-03-31""#)
                }
                if n % 5 == 2 {
                    // Split: one part of 1.00 in Rent, the rest in Groceries.
                    let rest = Money(amount)! - Money(cents: 100)
                    members.append(#""splits":[{"categoryId":1,"amount":"\#(rest)"},{"categoryId":2,"amount":"1.00","note":"fee"}]"#)
                } else if n % 5 != 3 {
                    members.append(#""categoryId":\#(n % 3 + 1)"#)
                }
                bodies.append("{" + members.joined(separator: ",") + "}")
            }
        }
        return bodies
    }

    struct ServerOccurrence: Decodable, Equatable {
        var scheduleId: Int
        var date: String
        var title: String
        var amount: Money
    }

    @Test func theLedgerAnswersTheServersUpcomingAndScheduled() async throws {
        var options = BudgetApp.Options()
        options.clock = CivilClock(now: try #require(Timestamp("\(Self.today)T12:00:00Z")))
        let today = try Self.day(Self.today)
        try await TestApp.with(options: options) { server in
            for body in [
                #"{"name":"Checking","type":"checking","openingBalance":"500.00"}"#, #"{"name":"Card","type":"credit"}"#,
            ] {
                #expect(try await server.request("POST", "/accounts", json: body).status == 201)
            }
            for body in [
                #"{"title":"Groceries","amount":"300.00","rollover":true}"#, #"{"title":"Rent","amount":"900.00"}"#,
                #"{"title":"Fun","amount":"50.00"}"#,
            ] {
                #expect(try await server.request("POST", "/categories", json: body).status == 201)
            }
            let bodies = Self.scheduleBodies()
            let created = try await server.request("POST", "/schedules", json: "[" + bodies.joined(separator: ",") + "]")
            try #require(created.status == 201, "\(created.text)")
            // What the server's own poster does at its next run, now: the answers below do not move while read.
            let posted = try #require(Int(try await server.scalar("SELECT post_due_schedules(DATE '\(Self.today)')") ?? ""))
            #expect(posted > 50, "the autoPost schedules from before today posted their past occurrences")
            #expect(try await server.scalar("SELECT post_due_schedules(DATE '\(Self.today)')") == "0")

            let (client, store) = try server.makeClient(
                device: "schedules", collections: ["categories", "transactions", "budgets", "accounts", "schedules"])
            try await client.pull()
            let decoder = JSONDecoder()
            let schedules = try await store.records(in: "schedules").values.map { try $0.decode(BudgetSchedule.self, using: decoder) }
            let transactions = try await store.records(in: "transactions").values.map { try $0.decode(BudgetTransaction.self, using: decoder) }
            let categories = try await store.records(in: "categories").values.map { try $0.decode(BudgetCategory.self, using: decoder) }
            let accounts = try await store.records(in: "accounts").values.map { try $0.decode(BudgetAccount.self, using: decoder) }
            #expect(schedules.count == bodies.count && transactions.count >= posted)
            #expect(Set(schedules.map(\.frequency)) == Set(ScheduleFrequency.allCases) && schedules.contains { $0.splits?.count == 2 })
            #expect(transactions.contains { $0.isSplit } && transactions.contains { $0.parentId != nil })
            let ledger = BudgetLedger(categories: categories, transactions: transactions, budgets: [], accounts: accounts, schedules: schedules)

            // Each schedule's nextDate is the first occurrence after what the poster handled.
            for schedule in schedules {
                let handled = try await server.scalar("SELECT posted_through FROM schedules WHERE id = \(schedule.id)")
                let next = schedule.frequency.nextDate(
                    firstDate: try Self.day(schedule.firstDate), endDate: try schedule.endDate.map(Self.day), after: try handled.map(Self.day))
                #expect(next?.description == schedule.nextDate, "schedule \(schedule.id), \(schedule.frequency) from \(schedule.firstDate)")
            }

            var listed = 0
            for days in [1, 10, 30, 45, 73, 200, 366] {
                let answer = try await server.request("GET", "/schedules/upcoming?days=\(days)")
                #expect(answer.status == 200)
                let expected = try decoder.decode([ServerOccurrence].self, from: Data(answer.body))
                let computed = ledger.upcoming(days: days, today: today).map {
                    ServerOccurrence(scheduleId: $0.scheduleId, date: "\($0.date)", title: $0.title, amount: $0.amount)
                }
                #expect(computed == expected, "days=\(days)")
                listed += expected.count
            }
            #expect(listed > 1000)

            // Every month from one before the earliest first date to 15 months ahead, past ones included.
            let first = try #require(Month("2026-01")), last = try #require(Month("2029-03"))
            var scheduledMonths = 0
            var month = first
            while month <= last {
                let answer = try await server.request("GET", "/months/\(month)")
                #expect(answer.status == 200)
                let expected = try decoder.decode(ServerMonthSummary.self, from: Data(answer.body))
                let computed = ServerMonthSummary(ledger.summary(in: month))
                #expect(computed == expected, "\(month)")
                if expected.scheduled != .zero { scheduledMonths += 1 }
                month = month.adding(1)
            }
            #expect(scheduledMonths >= 15)
            for id in [1, 2] {
                let answer = try await server.request("GET", "/accounts/\(id)")
                let balance = try #require(ledger.balances(of: id)).balance
                #expect(try decoder.decode(AccountBalance.self, from: Data(answer.body)).balance == balance, "account \(id)")
            }
        }
    }

    struct AccountBalance: Decodable {
        var balance: Money
    }
}
