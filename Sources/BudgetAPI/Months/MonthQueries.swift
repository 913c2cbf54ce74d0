import Postgres

/// The SQL behind `/months` and `/reports/spending` (docs/api.md, Months); the figures come from
/// `category_months` (migrations/0014), as a category's do with `?month=`.
enum MonthQueries {
    /// One month's summary: the totals over every category, each column two decimals.
    static let summary = PlainRecord([
        RecordField("month", "month", .month, .derived),
        RecordField("budgeted", "budgeted", .money, .derived),
        RecordField("spent", "spent", .money, .derived),
        RecordField("carried", "carried", .money, .derived),
        RecordField("remaining", "remaining", .money, .derived),
    ])

    /// `GET /months/:month`: one row per category in id order, each with the month's totals (window sums,
    /// so the figures are computed once), the month and the feed position; no category still answers one
    /// row, whose category columns are NULL.
    ///
    /// Columns: the `summary` columns, the feed position, then (`r.*`) the totals again, the sort key and the
    /// category's `CategoryRecord.monthShape` record columns (from `monthRecordColumn`).
    static func month(_ month: Query, in ledger: LedgerID) -> Query {
        let record = CategoryRecord.monthShape.record
        return """
            SELECT m.month, coalesce(r.total_budgeted, 0.00), coalesce(r.total_spent, 0.00),
                   coalesce(r.total_carried, 0.00), coalesce(r.total_remaining, 0.00), \(ChangeFeedQueries.position(ledger)), r.*
            FROM (SELECT \(month) AS month) m
            LEFT JOIN LATERAL (
                SELECT sum(f.budgeted) OVER () AS total_budgeted, sum(f.spent) OVER () AS total_spent,
                       sum(f.carried) OVER () AS total_carried, sum(f.remaining) OVER () AS total_remaining,
                       c.id AS sort_id,
                       \(record.columns)
                FROM \(CategoryQueries.source(month: "m.month"))
                WHERE \(Categories.inLedger(ledger))
            ) r ON true
            ORDER BY r.sort_id
            """
    }

    /// Where the category columns of `month(_:)` start: after the summary, the position, the four totals
    /// again (`r.*`) and the sort key.
    static let monthRecordColumn = 5 + 1 + 4 + 1

    /// `GET /months?from&to`: one `summary` row per month, oldest first, then the feed position.
    static func summaries(_ range: MonthRange, in ledger: LedgerID) -> Query {
        """
        SELECT g.month::date, coalesce(sum(f.budgeted), 0.00), coalesce(sum(f.spent), 0.00),
               coalesce(sum(f.carried), 0.00), coalesce(sum(f.remaining), 0.00), \(ChangeFeedQueries.position(ledger))
        FROM generate_series(\(range.first.sql)::timestamp, \(range.last.sql)::timestamp, interval '1 month') AS g(month)
        LEFT JOIN (categories c CROSS JOIN LATERAL category_months(
            c.ledger_id, c.id, c.amount, c.rollover, c.created_at, \(range.first.sql), \(Int32(range.months.count))::integer) f)
            ON \(Categories.inLedger(ledger)) AND f.month = g.month
        GROUP BY g.month
        ORDER BY g.month
        """
    }

    /// `GET /reports/spending`: per month and category (of one category, with `categoryID`), the sum and
    /// count of its transactions, zero months included; ordered by month, then category.
    ///
    /// Columns: position, whether the category exists (true without one), then categoryId, month, spent,
    /// count (NULL when there is no category at all).
    static func spending(_ range: MonthRange, categoryID: Int64?, in ledger: LedgerID) -> Query {
        let only: Query = categoryID.map { "c.id = \($0)" } ?? "TRUE"
        let exists: Query = categoryID.map { CategoryQueries.exists(id: $0, in: ledger) } ?? "TRUE"
        return """
            SELECT \(ChangeFeedQueries.position(ledger)), \(exists), r.*
            FROM (SELECT 1) one
            LEFT JOIN LATERAL (
                SELECT c.id AS category_id, g.month::date AS month, coalesce(s.spent, 0.00) AS spent,
                       coalesce(s.count, 0) AS count
                FROM generate_series(\(range.first.sql)::timestamp, \(range.last.sql)::timestamp, interval '1 month') AS g(month)
                CROSS JOIN categories c
                LEFT JOIN (
                    SELECT t.category_id, date_trunc('month', t.date) AS month, sum(t.amount) AS spent, count(*) AS count
                    FROM transactions t
                    WHERE \(Transactions.inLedger(ledger))
                      AND t.date >= \(range.first.sql) AND t.date < \(range.last.adding(1).sql)
                    GROUP BY 1, 2
                ) s ON s.category_id = c.id AND s.month = g.month
                WHERE \(Categories.inLedger(ledger)) AND \(only)
            ) r ON true
            ORDER BY r.month, r.category_id
            """
    }

    /// A report row's members, as JSON names them and as the CSV header row does.
    static let spendingFields = [
        RecordField("categoryId", "category_id", .integer, .derived),
        RecordField("month", "month", .month, .derived),
        RecordField("spent", "spent", .money, .derived),
        RecordField("count", "count", .integer, .derived),
    ]
    static let spendingRow = PlainRecord(spendingFields)
}
