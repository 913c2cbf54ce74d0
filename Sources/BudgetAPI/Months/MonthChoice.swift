import BudgetCore
import HTTPServer
import Postgres

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
            throw APIError.invalidParameter(
                "to", "a range holds at most \(Self.maximumMonths) months; \(first) to \(last) holds \(last.index - first.index + 1)")
        }
        (self.first, self.last) = (first, last)
    }

    var months: [Month] { (0...(last.index - first.index)).map(first.adding) }
}
