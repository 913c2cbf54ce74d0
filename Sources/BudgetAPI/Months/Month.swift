import HTTPServer
import Postgres

/// A calendar month written `YYYY-MM` (ISO 8601), from `0001-01` to `9999-12` (docs/api.md, Months).
struct Month: Sendable, Hashable, Comparable, CustomStringConvertible {
    let year: Int
    let month: Int

    /// Exactly `YYYY-MM` with a month from 01 to 12: `2026-1`, `26-11` and `2026-11-01` are not months.
    init?(_ text: String) {
        guard text.utf8.count == 7, let day = CalendarDay(text + "-01") else { return nil }
        (year, month) = (day.year, day.month)
    }

    private init(index: Int) {
        (year, month) = (index / 12, index % 12 + 1)
    }

    /// Months counted from January of year 0, so that ranges are differences.
    var index: Int { year * 12 + month - 1 }

    /// The month `count` months later (earlier when negative).
    func adding(_ count: Int) -> Month { Month(index: index + count) }

    var description: String { Self.digits(year, 4) + "-" + Self.digits(month, 2) }

    /// The month's first day, `YYYY-MM-01`, as PostgreSQL reads a `date`.
    var firstDay: String { description + "-01" }

    /// The first day as a bound `date`.
    var sql: Query { "\(firstDay)::date" }

    static func < (lhs: Month, rhs: Month) -> Bool { lhs.index < rhs.index }

    private static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

/// The month a request names: a month, or `current`, which the server's clock resolves (`CivilClock`).
enum MonthChoice: Sendable, Equatable {
    case month(Month)
    case current

    /// Reads a query parameter or path segment; anything else is a 400 naming it.
    init(_ text: String, parameter: String) throws {
        if text == "current" {
            self = .current
        } else if let month = Month(text) {
            self = .month(month)
        } else {
            throw APIError.invalidParameter(parameter, "must be a month written YYYY-MM (01 to 12) or current; it was '\(text)'")
        }
    }

    /// The month's first day as a `date` expression.
    func sql(_ clock: CivilClock) -> Query {
        switch self {
        case .month(let month): month.sql
        case .current: clock.currentMonth
        }
    }
}

/// `from` and `to` of `/months` and `/reports/spending`: both months, inclusive, at most 120 months apart.
struct MonthRange: Sendable, Equatable {
    let first: Month
    let last: Month

    /// The most months one range may hold.
    static let maximumMonths = 120

    init(_ request: Request) throws {
        func month(_ name: String) throws -> Month {
            guard let text = request.queryValue(name) else { throw APIError.invalidParameter(name, "is required (YYYY-MM)") }
            guard let month = Month(text) else {
                throw APIError.invalidParameter(name, "must be a month written YYYY-MM (01 to 12); it was '\(text)'")
            }
            return month
        }
        let first = try month("from"), last = try month("to")
        guard first <= last else { throw APIError.invalidParameter("from", "must not be after to (\(first) is after \(last))") }
        guard last.index - first.index < Self.maximumMonths else {
            throw APIError.invalidParameter("to", "a range holds at most \(Self.maximumMonths) months; \(first) to \(last) holds \(last.index - first.index + 1)")
        }
        (self.first, self.last) = (first, last)
    }

    var months: [Month] { (0...(last.index - first.index)).map(first.adding) }
}
