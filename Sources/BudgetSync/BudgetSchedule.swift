import BudgetCore
import Foundation

/// A calendar day written `YYYY-MM-DD`, as the server writes a transaction's `date` and a schedule's dates.
///
/// A day, not an instant: it has no time zone. `today(in:)` answers the day it is somewhere.
public struct BudgetDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days counted from 1970-01-01 (negative before it).
    let dayNumber: Int

    /// Exactly `YYYY-MM-DD`, a real day of the proleptic Gregorian calendar (`2027-02-29` is nil).
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes.enumerated().allSatisfy({ [4, 7].contains($0.offset) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0.element) }),
            let year = Int(String(decoding: bytes[0..<4], as: UTF8.self)),
            let month = Int(String(decoding: bytes[5..<7], as: UTF8.self)),
            let day = Int(String(decoding: bytes[8..<10], as: UTF8.self))
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The day, or nil if the month has no such day.
    public init?(year: Int, month: Int, day: Int) {
        guard year >= 1, (1...12).contains(month), (1...BudgetDate.daysIn(year: year, month: month)).contains(day) else { return nil }
        dayNumber = BudgetDate.dayNumber(year: year, month: month, day: day)
    }

    init(dayNumber: Int) { self.dayNumber = dayNumber }

    /// The day it is now in `timeZone`; the server's own "today" follows its `--time-zone` (docs/configuration.md).
    public static func today(in timeZone: TimeZone = .current, now: Date = Date()) -> BudgetDate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        return BudgetDate(dayNumber: dayNumber(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1))
    }

    public var year: Int { civil.year }
    public var month: Int { civil.month }
    public var day: Int { civil.day }
    /// The month the day falls in.
    public var budgetMonth: Month { Month(year: year, month: month) }

    /// The day `count` days later (earlier when negative).
    public func adding(days count: Int) -> BudgetDate { BudgetDate(dayNumber: dayNumber + count) }

    public var description: String {
        let (year, month, day) = civil
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + "-" + two(month) + "-" + two(day)
    }

    public static func < (lhs: BudgetDate, rhs: BudgetDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The last day of a month given as months counted from January of year 0 (`Month.index`).
    static func lastDay(ofMonthIndex index: Int) -> BudgetDate {
        let year = index / 12, month = index % 12 + 1
        return BudgetDate(dayNumber: dayNumber(year: year, month: month, day: daysIn(year: year, month: month)))
    }

    /// The day `day` of a month index, or the month's last day when the month is shorter.
    static func clamped(monthIndex index: Int, day: Int) -> BudgetDate {
        let year = index / 12, month = index % 12 + 1
        return BudgetDate(dayNumber: dayNumber(year: year, month: month, day: min(day, daysIn(year: year, month: month))))
    }

    // The calendar arithmetic counts years from March, so that February, the month of varying length, ends
    // each counted year: a day's place in its year is then a fixed function of its month.
    private static func dayNumber(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private var civil: (year: Int, month: Int, day: Int) {
        let shifted = dayNumber + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// How often a schedule falls due (docs/splits-and-schedules.md, The date rules).
public enum ScheduleFrequency: String, Sendable, Hashable, Codable, CaseIterable {
    case once, daily, weekly, everyOtherWeek, twiceAMonth, every4Weeks, monthly, everyOtherMonth, every3Months, every4Months
    case twiceAYear, yearly, everyOtherYear

    private enum Step {
        case none, days(Int), months(Int), twiceAMonth
    }

    private var step: Step {
        switch self {
        case .once: .none
        case .daily: .days(1)
        case .weekly: .days(7)
        case .everyOtherWeek: .days(14)
        case .every4Weeks: .days(28)
        case .twiceAMonth: .twiceAMonth
        case .monthly: .months(1)
        case .everyOtherMonth: .months(2)
        case .every3Months: .months(3)
        case .every4Months: .months(4)
        case .twiceAYear: .months(6)
        case .yearly: .months(12)
        case .everyOtherYear: .months(24)
        }
    }

    /// The occurrences `d` with `after < d ≤ through` and `firstDate ≤ d ≤ endDate`, in order: the server's
    /// `schedule_occurrences` (a nil `after` is before everything, a nil `endDate` never).
    ///
    /// Day steps count from `firstDate`. Month steps are `firstDate` plus n × k months, each computed from
    /// `firstDate` and clamped to the month's last day, so a schedule on the 31st falls on the 30th in April
    /// and on the 31st again in May, and one on Feb 29 falls on Feb 28 in common years. `twiceAMonth` falls
    /// on the 15th and the last day of each month, from `firstDate` on.
    public func occurrences(firstDate: BudgetDate, endDate: BudgetDate?, after: BudgetDate?, through: BudgetDate) -> [BudgetDate] {
        let lower = max(firstDate, after.map { $0.adding(days: 1) } ?? firstDate)
        let upper = endDate.map { min($0, through) } ?? through
        guard lower <= upper else { return [] }
        return Array(dates(firstDate: firstDate, from: lower).prefix { $0 <= upper })
    }

    /// The first occurrence after `after` (from `firstDate` when nil), or nil when none is left before
    /// `endDate`: the server's `schedule_next_date`, a schedule's `nextDate`.
    public func nextDate(firstDate: BudgetDate, endDate: BudgetDate?, after: BudgetDate?) -> BudgetDate? {
        let lower = max(firstDate, after.map { $0.adding(days: 1) } ?? firstDate)
        var dates = dates(firstDate: firstDate, from: lower).makeIterator()
        guard let next = dates.next(), endDate.map({ next <= $0 }) ?? true else { return nil }
        return next
    }

    /// Every occurrence on or after `lower` (itself on or after `firstDate`), without end.
    private func dates(firstDate: BudgetDate, from lower: BudgetDate) -> AnySequence<BudgetDate> {
        switch step {
        case .none:
            return AnySequence(lower <= firstDate ? [firstDate] : [])
        case .days(let length):
            // The first multiple of the step on or after `lower`.
            let count = (lower.dayNumber - firstDate.dayNumber + length - 1) / length
            return AnySequence(sequence(first: firstDate.adding(days: count * length)) { $0.adding(days: length) })
        case .months(let length):
            // Occurrence n falls in month first + n × length; those before lower's month are all before lower.
            let firstMonth = firstDate.budgetMonth.index
            return AnySequence(
                sequence(state: (lower.budgetMonth.index - firstMonth) / length) { count -> BudgetDate? in
                    while true {
                        let date = BudgetDate.clamped(monthIndex: firstMonth + count * length, day: firstDate.day)
                        count += 1
                        if date >= lower { return date }
                    }
                })
        case .twiceAMonth:
            return AnySequence(
                sequence(state: (month: lower.budgetMonth.index, pending: [BudgetDate]())) { state -> BudgetDate? in
                    while state.pending.isEmpty {
                        state.pending = [BudgetDate.clamped(monthIndex: state.month, day: 15), BudgetDate.lastDay(ofMonthIndex: state.month)]
                            .filter { $0 >= lower }
                        state.month += 1
                    }
                    return state.pending.removeFirst()
                })
        }
    }
}

/// A scheduled transaction as `/schedules` answers it (docs/splits-and-schedules.md); `record.decode(BudgetSchedule.self)`.
///
/// `amount` has the transactions' sense: above zero money out, below zero money in.
public struct BudgetSchedule: Sendable, Hashable, Decodable {
    public var id: Int
    public var title: String
    public var amount: Money
    public var accountId: Int?
    /// Nil for a split schedule (its `splits` name the categories) and for one in an account without one.
    public var categoryId: Int?
    /// The parts each occurrence is split into (their `id` is nil); nil for a plain schedule.
    public var splits: [BudgetSplit]?
    public var payee: String?
    public var note: String?
    public var frequency: ScheduleFrequency
    /// `YYYY-MM-DD`, the first occurrence's day (for `twiceAMonth`, the day they start from).
    public var firstDate: String
    /// `YYYY-MM-DD`, the last day an occurrence may fall on; nil for a schedule without end.
    public var endDate: String?
    /// The first occurrence the server has not handled yet (posted, or for a manual schedule let pass);
    /// nil when no occurrence is left.
    public var nextDate: String?
    /// Whether the server writes each due occurrence as a transaction by itself.
    public var autoPost: Bool
    public var createdAt: String
    public var updatedAt: String
    public var version: Int

    /// The occurrences not handled yet (from `nextDate`) up to `through`, in order.
    public func pendingOccurrences(through: BudgetDate) -> [BudgetDate] {
        guard let next = nextDate.flatMap(BudgetDate.init), let first = BudgetDate(firstDate) else { return [] }
        return frequency.occurrences(
            firstDate: first, endDate: endDate.flatMap(BudgetDate.init), after: next.adding(days: -1), through: through)
    }
}

/// One part of a split transaction or schedule (docs/splits-and-schedules.md): what one category takes of
/// the total. Encodes without `id` (and without `note` when nil), as a write's `splits` member wants it.
public struct BudgetSplit: Sendable, Hashable, Codable {
    /// The part's own transaction id, in a split transaction's answer; nil in a schedule and in a write.
    public var id: Int?
    public var categoryId: Int
    public var amount: Money
    public var note: String?

    public init(categoryId: Int, amount: Money, note: String? = nil) {
        self.categoryId = categoryId
        self.amount = amount
        self.note = note
    }

    private enum CodingKeys: String, CodingKey {
        case id, categoryId, amount, note
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(categoryId, forKey: .categoryId)
        try container.encode(amount, forKey: .amount)
        try container.encodeIfPresent(note, forKey: .note)
    }
}

/// One occurrence still to come, as `GET /schedules/upcoming` lists it.
public struct ScheduledOccurrence: Sendable, Hashable {
    public var scheduleId: Int
    public var date: BudgetDate
    public var title: String
    public var amount: Money
}
