/// A calendar date without time zone, PostgreSQL's `date`, printed and parsed as `YYYY-MM-DD`.
public struct PostgresDate: Sendable, Hashable, Comparable, CustomStringConvertible, PostgresEncodable, PostgresDecodable {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Creates a date; returns nil when the day does not exist in that month (`2026-02-30`).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
            (1...CivilCalendar.daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD` (the ISO form PostgreSQL prints with `DateStyle=ISO`).
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The date `days` days after 1970-01-01 (negative for earlier dates).
    public init(daysSinceEpoch days: Int) {
        let (year, month, day) = CivilCalendar.civilDate(fromDaysSinceEpoch: days)
        self.year = year
        self.month = month
        self.day = day
    }

    public init(postgresText: String) throws {
        // Dates outside 0001–9999 ("infinity", BC years) have no meaning for a budget.
        guard let date = PostgresDate(postgresText) else {
            throw PostgresError.decoding("not a YYYY-MM-DD date", text: postgresText, type: "PostgresDate")
        }
        self = date
    }

    /// A binary `date`: days since 2000-01-01. Refused, as the text is, outside the years 0001–9999.
    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        guard type == .date else {
            try self.init(postgresText: PostgresBinary.text(value, type: type))
            return
        }
        guard value.count == 4 else { throw PostgresError(kind: .decoding, message: "a binary date has 4 bytes, not \(value.count)") }
        let days = Int64(Int32(truncatingIfNeeded: PostgresBinary.bigEndian(value)))
        let date = PostgresDate(daysSinceEpoch: Int(days + PostgresBinary.epochDays))
        guard (1...9999).contains(date.year) else {
            throw PostgresError.decoding("not a date of the years 0001–9999", text: try PostgresBinary.text(value, type: type), type: "PostgresDate")
        }
        self = date
    }

    /// Days since 1970-01-01.
    public var daysSinceEpoch: Int {
        CivilCalendar.daysSinceEpoch(year: year, month: month, day: day)
    }

    public var description: String {
        CivilCalendar.pad(year, 4) + "-" + CivilCalendar.pad(month, 2) + "-" + CivilCalendar.pad(day, 2)
    }

    public var postgresText: String { description }

    public static func < (lhs: PostgresDate, rhs: PostgresDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// Proleptic Gregorian calendar arithmetic (Howard Hinnant's days-from-civil algorithm).
enum CivilCalendar {
    static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilDate(fromDaysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
