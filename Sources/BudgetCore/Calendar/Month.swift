/// A calendar month written `YYYY-MM` (ISO 8601), from `0001-01` to `9999-12` (docs/api.md, Months).
public struct Month: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int

    /// Exactly `YYYY-MM` with a month from 01 to 12: `2026-1`, `26-11` and `2026-11-01` are not months.
    public init?(_ text: String) {
        guard text.utf8.count == 7, let day = CalendarDay(text + "-01") else { return nil }
        (year, month) = (day.year, day.month)
    }

    /// Month `month` (1 to 12) of `year`, e.g. the month a day falls in.
    public init(year: Int, month: Int) {
        precondition((1...12).contains(month), "a month is 1 to 12")
        (self.year, self.month) = (year, month)
    }

    private init(index: Int) {
        (year, month) = (index / 12, index % 12 + 1)
    }

    /// Months counted from January of year 0, so that ranges are differences.
    public var index: Int { year * 12 + month - 1 }

    /// The month `count` months later (earlier when negative).
    public func adding(_ count: Int) -> Month { Month(index: index + count) }

    public var description: String { Self.digits(year, 4) + "-" + Self.digits(month, 2) }

    /// The month's first day, `YYYY-MM-01`, as PostgreSQL reads a `date`.
    public var firstDay: String { description + "-01" }

    public static func < (lhs: Month, rhs: Month) -> Bool { lhs.index < rhs.index }

    private static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
