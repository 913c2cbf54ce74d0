import Postgres

/// The SQL behind the schedule routes and the poster beyond the statements `TypedResource` builds from the members (`Schedules.members`).
enum ScheduleQueries {
    /// A schedule under its seed id (or the next server id), with the times and version an export wrote.
    ///
    /// An export does not hold what the poster handled (`posted_through`, no member), so the seed finds it in
    /// the transactions it loaded before the schedules (`TypedResources.all`): the last occurrence posted is
    /// the latest transaction whose import id is `schedule:<id>:<its date>`. A posted transaction deleted
    /// before the export is then not posted again, unless it was the last one; a schedule posted by hand has
    /// none, and the poster lets its past occurrences pass at its first run.
    static func seedInsert(_ record: SeedRecord<ScheduleFields>, today: Query, in ledger: LedgerID) -> Query {
        """
        WITH n AS (SELECT \(Schedules.newID(record.fields)) AS id)
        INSERT INTO schedules (ledger_id, id, \(Schedules.members.seedColumns), posted_through)
        SELECT \(ledger), n.id, \(Schedules.members.seedValues(record, today: today)),
               (SELECT max(t.date) FROM transactions t
                WHERE t.ledger_id = \(ledger) AND t.import_id = 'schedule:' || n.id || ':' || to_char(t.date, 'YYYY-MM-DD'))
        FROM n
        """
    }

    /// Posts what is due in every ledger (migrations/0019): answers how many transactions it wrote.
    static func postDue(today: Query) -> Query {
        "SELECT post_due_schedules(\(today))"
    }

    /// `GET /schedules/upcoming`: the ledger's occurrences the poster has not handled, up to `days` days
    /// after today, by date then schedule: `{scheduleId, date, title, amount}` columns, then the feed
    /// position on every row (one row of NULLs when there is none, so the position is always read).
    static func upcoming(days: Int32, today: Query, in ledger: LedgerID) -> Query {
        """
        SELECT o.schedule_id, o.date, o.title, o.amount, \(ChangeFeedQueries.position(ledger))
        FROM (SELECT 1) one
        LEFT JOIN LATERAL (
            SELECT s.id AS schedule_id, d.date, s.title, s.amount
            FROM schedules s
            CROSS JOIN LATERAL schedule_occurrences(s.frequency, s.first_date, s.end_date, s.posted_through, \(today) + \(days)::integer) AS d(date)
            WHERE \(Schedules.inLedger(ledger))
        ) o ON true
        ORDER BY o.date, o.schedule_id
        """
    }

    /// An occurrence of `upcoming`.
    static let occurrence = PlainRecord([
        RecordField("scheduleId", "schedule_id", .integer, .derived),
        RecordField("date", "date", .date, .derived),
        RecordField("title", "title", .text, .derived),
        RecordField("amount", "amount", .money, .derived),
    ])

    /// Where `upcoming`'s feed position is.
    static let upcomingPositionColumn = 4

    /// The month figure `scheduled` (docs/api.md, Months): per schedule `s` of the ledger, the amounts of
    /// its occurrences from `start` up to (not including) `end` that the poster has not handled, in the
    /// transactions' sense (positive is money out). Grouped by the occurrence's month, first day.
    static func scheduled(from start: Query, before end: Query, in ledger: LedgerID) -> Query {
        """
        SELECT date_trunc('month', d.date)::date AS month, sum(s.amount) AS scheduled
        FROM schedules s
        CROSS JOIN LATERAL schedule_occurrences(
            s.frequency, s.first_date, s.end_date, greatest(s.posted_through, \(start) - 1), \(end) - 1) AS d(date)
        WHERE \(Schedules.inLedger(ledger))
        GROUP BY 1
        """
    }
}
