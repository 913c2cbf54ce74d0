import BudgetCore
import Postgres

/// SQL for comparisons on a typed column: the query text is read as the column's type, then bound and cast.
enum ColumnConditions {
    static func condition(sql column: Query, type: ColumnType, field: String, op: ComparisonOperator, value: FilterValue) throws -> Query {
        guard case .text(let raw) = value else {
            return op == .eq ? "\(column) IS NULL" : "\(column) IS NOT NULL"
        }
        switch op {
        case .like:
            return "\(text(column, type)) ~* \(raw)"
        case .contains, .startsWith, .endsWith:
            return "\(text(column, type)) ILIKE \(LikePattern.make(raw, op: op))"
        case .eq, .ne, .lt, .lte, .gt, .gte:
            let bound = try typedValue(raw, type: type, field: field)
            // SQL comparison of the column's own type: numbers and money numerically (exactly), dates by date.
            return "\(column) \(sqlOperator(op)) \(bound)::\(type.sqlName)"
        }
    }

    /// The column as the text clients see: a month as `YYYY-MM`, anything else as PostgreSQL writes it.
    private static func text(_ column: Query, _ type: ColumnType) -> Query {
        type == .month ? "to_char(\(column), 'YYYY-MM')" : "\(column)::text"
    }

    /// `q=` over a column: its text contains the search text, ignoring case.
    static func search(sql column: Query, pattern: String) -> Query {
        "\(column)::text ILIKE \(pattern)"
    }

    private static func sqlOperator(_ op: ComparisonOperator) -> Query {
        switch op {
        case .eq: "="
        case .ne: "<>"
        case .lt: "<"
        case .lte: "<="
        case .gt: ">"
        case .gte: ">="
        case .like, .contains, .startsWith, .endsWith: preconditionFailure("\(op) is not an ordering comparison")
        }
    }

    /// Checks the text against the column's type, so a bad value is a 400 naming the field, not a database error.
    static func typedValue(_ raw: String, type: ColumnType, field: String) throws -> String {
        let isValid: Bool
        switch type {
        case .text:
            return raw
        case .integer:
            isValid = Int64(raw) != nil
        case .money:
            // Any decimal number is compared exactly as numeric: amount_gte=12.345 is a fine question.
            isValid = raw.wholeMatch(of: /-?[0-9]+(\.[0-9]+)?/) != nil
        case .date:
            isValid = CalendarDay(raw) != nil
        case .timestamp:
            isValid =
                CalendarDay(String(raw.prefix(10))) != nil
                && raw.wholeMatch(of: /\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?/) != nil
        case .boolean:
            isValid = raw == "true" || raw == "false"
        case .month:
            // Compared as its first day, so `month_gte=2026-11` is a date comparison.
            guard let month = Month(raw) else { isValid = false; break }
            return month.firstDay
        case .json:
            // `ColumnCatalog.field` refuses such fields before any value is read.
            isValid = false
        }
        guard isValid else {
            throw APIError.malformedQuery("'\(raw)' is not \(description(of: type)), which the field \(field) holds")
        }
        return raw
    }

    private static func description(of type: ColumnType) -> String {
        switch type {
        case .integer: "an integer"
        case .money: "a decimal amount such as 12.50"
        case .text: "text"
        case .date: "a date (YYYY-MM-DD)"
        case .timestamp: "an ISO 8601 date or date-time"
        case .boolean: "true or false"
        case .month: "a month (YYYY-MM)"
        case .json: "a JSON value"
        }
    }
}
