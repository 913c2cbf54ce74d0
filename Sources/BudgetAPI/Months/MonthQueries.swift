import BudgetCore
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
        RecordField("income", "income", .money, .derived),
        RecordField("uncategorised", "uncategorised", .money, .derived),
        RecordField("toBeBudgeted", "to_be_budgeted", .money, .derived),
        RecordField("scheduled", "scheduled", .money, .derived),
    ])

    /// Where the feed position follows the `summary` columns.
    static let positionColumn = 9

    /// `GET /months/:month`: one row per category in id order, each with the month's totals (window sums,
    /// so the figures are computed once), the month and the feed position; no category still answers one
    /// row, whose category columns are NULL.
    ///
    /// `toBeBudgeted` is the income of every month up to this one's end minus what every category was given
    /// from its first month through this one (docs/accounts.md, Income, uncategorised and what is left to
    /// budget): the income is one pass over the transactions without a category (`budgetMoney`), what was
    /// given a window sum of each category's closed form (`budgetedBefore`) beside its figures, so the answer
    /// stays one statement however many months came before.
    ///
    /// `scheduled` is what the ledger's schedules still bring in the month (`ScheduleQueries.scheduled`), one
    /// pass over the schedules beside the rest.
    ///
    /// Columns: the `summary` columns, the feed position, then (`r.*`) the totals again, what the categories
    /// were given, the sort key and the category's `CategoryRecord.monthShape` record columns (from
    /// `monthRecordColumn`).
    static func month(_ month: Query, in ledger: LedgerID) -> Query {
        let record = CategoryRecord.monthShape.record
        return """
            SELECT m.month, coalesce(r.total_budgeted, 0.00), coalesce(r.total_spent, 0.00),
                   coalesce(r.total_carried, 0.00), coalesce(r.total_remaining, 0.00),
                   i.income, i.uncategorised, i.earned - coalesce(r.total_budgeted_so_far, 0.00), sc.scheduled,
                   \(ChangeFeedQueries.position(ledger)), r.*
            FROM (SELECT month, (month + interval '1 month')::date AS next FROM (SELECT \(month) AS month) chosen) m
            CROSS JOIN LATERAL (
                SELECT coalesce(sum(-u.amount) FILTER (WHERE u.amount < 0 AND u.date >= m.month), 0.00) AS income,
                       coalesce(sum(u.amount) FILTER (WHERE u.amount > 0), 0.00) AS uncategorised,
                       coalesce(sum(-u.amount) FILTER (WHERE u.amount < 0), 0.00) AS earned
                FROM \(budgetMoney(from: "m.month", before: "m.next", in: ledger))
            ) i
            CROSS JOIN LATERAL (
                SELECT coalesce(sum(x.scheduled), 0.00) AS scheduled
                FROM (\(ScheduleQueries.scheduled(from: "m.month", before: "m.next", in: ledger))) x
            ) sc
            LEFT JOIN LATERAL (
                SELECT sum(f.budgeted) OVER () AS total_budgeted, sum(f.spent) OVER () AS total_spent,
                       sum(f.carried) OVER () AS total_carried, sum(f.remaining) OVER () AS total_remaining,
                       sum(\(budgetedBefore("m.next"))) OVER () AS total_budgeted_so_far,
                       c.id AS sort_id,
                       \(record.columns)
                FROM categories c
                \(firstMonth(budgetsBefore: "m.next", countedBefore: "m.next", in: ledger))
                CROSS JOIN LATERAL category_months(c.ledger_id, c.id, c.amount, c.rollover, c.created_at, m.month, 1) f
                WHERE \(Categories.inLedger(ledger))
            ) r ON true
            ORDER BY r.sort_id
            """
    }

    /// Where the category columns of `month(_:)` start: after the summary, the position, the four totals
    /// and what was given again (`r.*`), and the sort key.
    static let monthRecordColumn = positionColumn + 1 + 5 + 1

    /// `GET /months?from&to`: one `summary` row per month, oldest first, then the feed position.
    ///
    /// Per month `s` sums the categories' figures and what they were given in it (from each one's first
    /// month; the range's first month also carries what they were given before the range); `i` sums the
    /// income and uncategorised spending per month, income before the range counted in its first month.
    /// `toBeBudgeted` is then a running sum of both (docs/accounts.md, Income, uncategorised and what is left
    /// to budget). `sc` sums what the schedules still bring per month over the range in one pass
    /// (`ScheduleQueries.scheduled`).
    static func summaries(_ range: MonthRange, in ledger: LedgerID) -> Query {
        """
        SELECT s.month, s.budgeted, s.spent, s.carried, s.remaining,
               coalesce(i.income, 0.00), coalesce(i.uncategorised, 0.00),
               sum(coalesce(i.earned, 0.00)) OVER running - sum(s.newly_budgeted) OVER running,
               coalesce(sc.scheduled, 0.00), \(ChangeFeedQueries.position(ledger))
        FROM (
            SELECT g.month::date AS month, coalesce(sum(f.budgeted), 0.00) AS budgeted, coalesce(sum(f.spent), 0.00) AS spent,
                   coalesce(sum(f.carried), 0.00) AS carried, coalesce(sum(f.remaining), 0.00) AS remaining,
                   coalesce(sum(f.budgeted) FILTER (WHERE fm.first <= g.month), 0.00)
                   + coalesce(sum(\(budgetedBefore(range.first.sql))) FILTER (WHERE g.month = \(range.first.sql)), 0.00) AS newly_budgeted
            FROM generate_series(\(range.first.sql)::timestamp, \(range.last.sql)::timestamp, interval '1 month') AS g(month)
            LEFT JOIN (categories c
                \(firstMonth(budgetsBefore: range.last.adding(1).sql, countedBefore: range.first.sql, in: ledger))
                CROSS JOIN LATERAL category_months(
                    c.ledger_id, c.id, c.amount, c.rollover, c.created_at, \(range.first.sql), \(Int32(range.months.count))::integer) f)
                ON \(Categories.inLedger(ledger)) AND f.month = g.month
            GROUP BY g.month
        ) s
        LEFT JOIN (
            SELECT greatest(date_trunc('month', u.date)::date, \(range.first.sql)) AS month,
                   sum(-u.amount) FILTER (WHERE u.amount < 0 AND u.date >= \(range.first.sql)) AS income,
                   sum(u.amount) FILTER (WHERE u.amount > 0) AS uncategorised,
                   sum(-u.amount) FILTER (WHERE u.amount < 0) AS earned
            FROM \(budgetMoney(from: range.first.sql, before: range.last.adding(1).sql, in: ledger))
            GROUP BY 1
        ) i ON i.month = s.month
        LEFT JOIN (\(ScheduleQueries.scheduled(from: range.first.sql, before: range.last.adding(1).sql, in: ledger))) sc
            ON sc.month = s.month
        WINDOW running AS (ORDER BY s.month ROWS UNBOUNDED PRECEDING)
        ORDER BY s.month
        """
    }

    /// The transactions `u` that count in the budget's income and uncategorised spending (docs/accounts.md,
    /// Income, uncategorised and what is left to budget), dated before `end`: those in an on-budget account
    /// without a category, except a transfer whose other side is in an on-budget account too (money moved
    /// between budgeted accounts is neither earned nor spent; a loan paid out into checking is earned). Money
    /// out before `start` is left out: only income adds up over the months, so only it is read from before.
    ///
    /// A split has no category either, but its parts have (docs/splits-and-schedules.md): it is left out, and
    /// the rows come from `transactions_uncategorised_idx` alone (migrations/0019); the other side of a
    /// transfer is one primary-key probe. Written as outer joins, not `NOT EXISTS`: PostgreSQL 15's plan for
    /// that cost `GET /months/{m}` ~2.5 ms more PostgreSQL CPU on the bench data (~60% more).
    static func budgetMoney(from start: Query, before end: Query, in ledger: LedgerID) -> Query {
        """
        transactions u
        JOIN accounts a ON a.ledger_id = u.ledger_id AND a.id = u.account_id
        LEFT JOIN transactions p ON p.ledger_id = u.ledger_id AND p.id = u.transfer_id
        LEFT JOIN accounts pa ON pa.ledger_id = p.ledger_id AND pa.id = p.account_id
        WHERE u.ledger_id = \(ledger) AND u.category_id IS NULL AND NOT u.split AND u.date < \(end)
          AND (u.amount < 0 OR u.date >= \(start))
          AND a.on_budget AND pa.on_budget IS NOT TRUE
        """
    }

    /// Joined after each category row `c`: `o`, its budget overrides (the first one's month before
    /// `budgetsBefore`, and how many there are and what they total before `countedBefore`), and `fm.first`,
    /// the category's first month as `category_months` counts it (migrations/0014): the least of the month
    /// it was created in (UTC), of its first transaction and of its first override.
    ///
    /// The first transaction is a `LIMIT 1` probe of `transactions_category_date_idx`: as a scalar
    /// `min()` subquery in `least()` the same probe cost this route ~1 ms more PostgreSQL CPU over 200
    /// categories. The overrides are one pass over the ledger's budgets, hashed by category.
    static func firstMonth(budgetsBefore limit: Query, countedBefore end: Query, in ledger: LedgerID) -> Query {
        """
        LEFT JOIN (
            SELECT b.category_id, min(b.month) AS first,
                   count(*) FILTER (WHERE b.month < \(end)) AS count, sum(b.amount) FILTER (WHERE b.month < \(end)) AS total
            FROM budgets b
            WHERE b.ledger_id = \(ledger) AND b.month < \(limit)
            GROUP BY b.category_id
        ) o ON o.category_id = c.id
        LEFT JOIN LATERAL (
            SELECT t.date FROM transactions t WHERE t.ledger_id = c.ledger_id AND t.category_id = c.id ORDER BY t.date LIMIT 1
        ) ft ON true
        CROSS JOIN LATERAL (
            SELECT least(date_trunc('month', c.created_at AT TIME ZONE 'UTC')::date, date_trunc('month', ft.date)::date, o.first) AS first
        ) fm
        """
    }

    /// What category `c` (with `o` and `fm` from `firstMonth`) was given from its first month up to the month
    /// starting at `end`, NULL when none of them comes before it: closed form, as `category_months` computes
    /// what carries, every month its amount and each override in place of it (`o` counted before `end`).
    static func budgetedBefore(_ end: Query) -> Query {
        """
        CASE WHEN fm.first < \(end) THEN
            c.amount * ((date_part('year', \(end)) - date_part('year', fm.first)) * 12
                        + date_part('month', \(end)) - date_part('month', fm.first) - coalesce(o.count, 0))::integer
            + coalesce(o.total, 0.00)
        END
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
