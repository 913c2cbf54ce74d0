import BudgetSync
import Foundation
import Testing

/// The schedules' date rules in BudgetSync (docs/splits-and-schedules.md, The date rules), pure logic with
/// the expected days written out by hand: month ends, leap years, a year end, end dates and `after`.
@Suite struct ScheduleDateRulesTests {
    static func day(_ text: String) -> BudgetDate {
        guard let date = BudgetDate(text) else { fatalError("not a day: \(text)") }
        return date
    }

    static func occurrences(
        _ frequency: ScheduleFrequency, first: String, end: String? = nil, after: String? = nil, through: String
    ) -> [String] {
        frequency.occurrences(firstDate: day(first), endDate: end.map(day), after: after.map(day), through: day(through))
            .map(\.description)
    }

    @Test func daysAreReadWrittenAndCountedAcrossLeapYearsAndCenturies() throws {
        #expect(BudgetDate("2028-02-29")?.description == "2028-02-29")
        #expect(BudgetDate("2027-02-29") == nil && BudgetDate("1900-02-29") == nil && BudgetDate("2000-02-29") != nil)
        #expect(BudgetDate("2026-13-01") == nil && BudgetDate("2026-04-31") == nil && BudgetDate("2026-4-30") == nil)
        #expect(BudgetDate("2026-1x-01") == nil && BudgetDate("0000-01-01") == nil)
        #expect(Self.day("2027-12-31").adding(days: 1).description == "2028-01-01")
        #expect(Self.day("2028-02-28").adding(days: 1).description == "2028-02-29")
        #expect(Self.day("2100-02-28").adding(days: 1).description == "2100-03-01")
        #expect(Self.day("1970-01-01").adding(days: -1).description == "1969-12-31")
        #expect(Self.day("2026-03-01").adding(days: -366).description == "2025-02-28")
        // Every day of four centuries goes through the text and back.
        var date = Self.day("1900-01-01")
        var checked = 0
        while date < Self.day("2300-01-01") {
            #expect(BudgetDate(date.description) == date, "\(date)")
            date = date.adding(days: 1)
            checked += 1
        }
        #expect(checked == 146_097)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = try #require(TimeZone(identifier: "UTC"))
        let lateUTC = try #require(utc.date(from: DateComponents(year: 2026, month: 12, day: 31, hour: 23)))
        #expect(BudgetDate.today(in: try #require(TimeZone(identifier: "UTC")), now: lateUTC).description == "2026-12-31")
        #expect(BudgetDate.today(in: try #require(TimeZone(identifier: "Europe/Berlin")), now: lateUTC).description == "2027-01-01")
    }

    @Test func daySteps() {
        #expect(Self.occurrences(.daily, first: "2027-12-30", through: "2028-01-02") == ["2027-12-30", "2027-12-31", "2028-01-01", "2028-01-02"])
        #expect(
            Self.occurrences(.weekly, first: "2028-02-15", through: "2028-03-14")
                == ["2028-02-15", "2028-02-22", "2028-02-29", "2028-03-07", "2028-03-14"])
        #expect(Self.occurrences(.everyOtherWeek, first: "2026-12-24", through: "2027-01-21") == ["2026-12-24", "2027-01-07", "2027-01-21"])
        #expect(
            Self.occurrences(.every4Weeks, first: "2027-01-31", through: "2027-04-30") == ["2027-01-31", "2027-02-28", "2027-03-28", "2027-04-25"])
        // Counted from the first date, not from `after`: the next one after the 10th of a series of the 1st, 8th…
        #expect(Self.occurrences(.weekly, first: "2026-01-01", after: "2026-01-10", through: "2026-01-22") == ["2026-01-15", "2026-01-22"])
    }

    @Test func monthStepsAreClampedToTheMonthsEndAndComputedFromTheFirstDateEachTime() {
        #expect(
            Self.occurrences(.monthly, first: "2026-01-31", through: "2026-06-30")
                == ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31", "2026-06-30"])
        #expect(Self.occurrences(.monthly, first: "2027-12-31", through: "2028-03-01") == ["2027-12-31", "2028-01-31", "2028-02-29"])
        #expect(Self.occurrences(.monthly, first: "2026-01-30", through: "2026-03-31") == ["2026-01-30", "2026-02-28", "2026-03-30"])
        #expect(
            Self.occurrences(.everyOtherMonth, first: "2026-08-31", through: "2027-04-30")
                == ["2026-08-31", "2026-10-31", "2026-12-31", "2027-02-28", "2027-04-30"])
        #expect(
            Self.occurrences(.every3Months, first: "2026-11-30", through: "2027-08-31") == ["2026-11-30", "2027-02-28", "2027-05-30", "2027-08-30"])
        #expect(
            Self.occurrences(.every4Months, first: "2026-10-31", through: "2027-10-31") == ["2026-10-31", "2027-02-28", "2027-06-30", "2027-10-31"])
        #expect(Self.occurrences(.twiceAYear, first: "2027-08-31", through: "2028-08-31") == ["2027-08-31", "2028-02-29", "2028-08-31"])
        #expect(
            Self.occurrences(.yearly, first: "2028-02-29", through: "2033-01-01")
                == ["2028-02-29", "2029-02-28", "2030-02-28", "2031-02-28", "2032-02-29"])
        #expect(
            Self.occurrences(.everyOtherYear, first: "2024-02-29", through: "2030-12-31") == ["2024-02-29", "2026-02-28", "2028-02-29", "2030-02-28"])
        #expect(Self.occurrences(.yearly, first: "2026-12-31", after: "2027-06-01", through: "2029-01-01") == ["2027-12-31", "2028-12-31"])
    }

    @Test func twiceAMonthFallsOnTheFifteenthAndTheLastDayFromTheFirstDateOn() {
        #expect(
            Self.occurrences(.twiceAMonth, first: "2028-01-20", through: "2028-03-15")
                == ["2028-01-31", "2028-02-15", "2028-02-29", "2028-03-15"])
        #expect(
            Self.occurrences(.twiceAMonth, first: "2026-12-15", through: "2027-01-31") == ["2026-12-15", "2026-12-31", "2027-01-15", "2027-01-31"])
        #expect(Self.occurrences(.twiceAMonth, first: "2027-02-01", through: "2027-02-28") == ["2027-02-15", "2027-02-28"])
    }

    @Test func onceEndDatesAndBounds() {
        #expect(Self.occurrences(.once, first: "2026-05-05", through: "2030-01-01") == ["2026-05-05"])
        #expect(Self.occurrences(.once, first: "2026-05-05", after: "2026-05-05", through: "2030-01-01") == [])
        #expect(Self.occurrences(.once, first: "2026-05-05", through: "2026-05-04") == [])
        #expect(
            Self.occurrences(.monthly, first: "2026-01-31", end: "2026-04-29", through: "2026-12-31") == ["2026-01-31", "2026-02-28", "2026-03-31"])
        #expect(Self.occurrences(.daily, first: "2026-01-01", end: "2026-01-03", after: "2025-06-01", through: "2026-12-31").count == 3)
        #expect(Self.occurrences(.daily, first: "2026-01-01", after: "2026-01-05", through: "2026-01-05") == [])

        let first = Self.day("2026-01-31")
        #expect(ScheduleFrequency.monthly.nextDate(firstDate: first, endDate: nil, after: nil)?.description == "2026-01-31")
        #expect(ScheduleFrequency.monthly.nextDate(firstDate: first, endDate: nil, after: Self.day("2026-01-31"))?.description == "2026-02-28")
        #expect(ScheduleFrequency.monthly.nextDate(firstDate: first, endDate: Self.day("2026-02-27"), after: first) == nil)
        #expect(ScheduleFrequency.once.nextDate(firstDate: first, endDate: nil, after: first) == nil)
        #expect(
            ScheduleFrequency.everyOtherYear.nextDate(firstDate: Self.day("2024-02-29"), endDate: nil, after: Self.day("2024-03-01"))?.description
                == "2026-02-28")
    }

    @Test func theLedgerListsWhatIsStillToComeAndEachMonthsScheduled() throws {
        func schedule(_ id: Int, _ frequency: ScheduleFrequency, amount: String, first: String, next: String?, end: String? = nil) throws
            -> BudgetSchedule
        {
            let json = """
                {"id":\(id),"title":"s\(id)","amount":\(amount),"accountId":1,"categoryId":null,"splits":null,"payee":null,"note":null,
                "frequency":"\(frequency.rawValue)","firstDate":"\(first)","endDate":\(end.map { "\"\($0)\"" } ?? "null"),
                "nextDate":\(next.map { "\"\($0)\"" } ?? "null"),"autoPost":true,
                "createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z","version":1}
                """
            return try JSONDecoder().decode(BudgetSchedule.self, from: Data(json.utf8))
        }
        let ledger = BudgetLedger(
            categories: [], transactions: [], budgets: [],
            schedules: [
                try schedule(2, .monthly, amount: "-2500.00", first: "2026-01-31", next: "2026-03-31"),
                try schedule(1, .twiceAMonth, amount: "10.00", first: "2026-01-01", next: "2026-04-15"),
                try schedule(3, .once, amount: "99.99", first: "2026-02-01", next: nil),
                try schedule(4, .weekly, amount: "5.00", first: "2026-04-02", next: "2026-04-02", end: "2026-04-09"),
            ])
        let upcoming = ledger.upcoming(days: 30, today: Self.day("2026-04-01"))
        #expect(
            upcoming.map { "\($0.date) \($0.scheduleId)" } == [
                "2026-03-31 2", "2026-04-02 4", "2026-04-09 4", "2026-04-15 1", "2026-04-30 1", "2026-04-30 2",
            ])
        #expect(upcoming.map(\.amount) == [-2500, 5, 5, 10, 10, -2500].map { Money(cents: $0 * 100) } && upcoming[0].title == "s2")
        let april = ledger.summary(in: try #require(Month("2026-04")))
        #expect(april.scheduled == Money("-2470.00"))
        #expect(ledger.summary(in: try #require(Month("2026-03"))).scheduled == Money(cents: -250_000))
        #expect(ledger.summary(in: try #require(Month("2026-02"))).scheduled == .zero)
        #expect(ledger.summary(in: try #require(Month("2026-05"))).scheduled == Money("-2480.00"))
    }

    @Test func aSplitsPartsEncodeAsAWriteWantsThem() throws {
        let parts = [BudgetSplit(categoryId: 1, amount: Money("52.30")!), BudgetSplit(categoryId: 2, amount: Money(cents: 1200), note: "soap")]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(
            String(decoding: try encoder.encode(parts), as: UTF8.self)
                == #"[{"amount":52.3,"categoryId":1},{"amount":12,"categoryId":2,"note":"soap"}]"#)
    }
}
