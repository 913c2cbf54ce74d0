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
}
