import Postgres

/// The SQL behind the schedule routes and the poster; the only place that knows schedules' column names.
enum ScheduleQueries {
    /// Writes answer (id, created, `record` columns) from the written row `s` (see `TypedResource`).
    private static var answer: Query { Schedules.writtenRecord }

    /// The columns every write names after `ledger_id` and `id`, in the order `values(_:today:)` gives them.
    private static let columns: Query =
        "title, amount, account_id, category_id, splits, payee, note, frequency, first_date, end_date, auto_post"

    /// The parts as the `splits` column stores them (`SchedulePart.storedJSON`), NULL without parts.
    private static func splits(_ fields: ScheduleFields) -> Query {
        switch fields.splits {
        case .some(.some(let parts)): "\(SchedulePart.storedJSON(parts))::jsonb"
        default: "NULL::jsonb"
        }
    }

    /// `fields`' values for `columns`, with what a create gives a member the request left out: no account,
    /// category, parts, payee, note or end, the first occurrence today, posted by hand.
    private static func values(_ fields: ScheduleFields, today: Query) -> Query {
        """
        \(fields.title), \(fields.amount), \(fields.accountID ?? nil)::bigint, \(fields.categoryID ?? nil)::bigint, \(splits(fields)),
        \(fields.payee ?? nil)::text, \(fields.note ?? nil)::text, \(fields.frequency)::text, coalesce(\(fields.firstDate)::date, \(today)),
        \(fields.endDate ?? nil)::date, coalesce(\(fields.autoPost)::boolean, false)
        """
    }

    /// Inserts a schedule under the client's id, or the next server id when it gave none.
    static func insert(_ fields: ScheduleFields, today: Query, in ledger: LedgerID) -> Query {
        """
        WITH s AS (
            INSERT INTO schedules (ledger_id, id, \(columns))
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('schedules_id_seq')), \(values(fields, today: today)))
            RETURNING *)
        SELECT s.id, true, \(answer)
        """
    }

    /// PUT: replaces the schedule with this id, or creates it under this id; the first column says which.
    /// What the poster handled (`posted_through`) stays: a replace changes what comes, not what was posted.
    static func replace(id: Int64, with fields: ScheduleFields, today: Query, in ledger: LedgerID) -> Query {
        """
        WITH s AS (
            INSERT INTO schedules AS existing (ledger_id, id, \(columns))
            VALUES (\(ledger), \(id), \(values(fields, today: today)))
            ON CONFLICT (ledger_id, id) DO UPDATE
                SET title = excluded.title, amount = excluded.amount, account_id = excluded.account_id,
                    category_id = excluded.category_id, splits = excluded.splits, payee = excluded.payee, note = excluded.note,
                    frequency = excluded.frequency, first_date = excluded.first_date, end_date = excluded.end_date,
                    auto_post = excluded.auto_post, version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT s.id, s.inserted, \(answer)
        """
    }

    /// PATCH: changes only the fields given; no row means no such schedule. Parts given take the place of a
    /// category (a split has none); an amount or parts that no longer add up meet `schedules_splits_add_up`.
    static func update(id: Int64, with fields: ScheduleFields, in ledger: LedgerID) -> Query {
        var assignments: [Query] = []
        if let title = fields.title { assignments.append("title = \(title)") }
        if let amount = fields.amount { assignments.append("amount = \(amount)") }
        if let accountID = fields.accountID { assignments.append("account_id = \(accountID)::bigint") }
        if let categoryID = fields.categoryID {
            assignments.append("category_id = \(categoryID)::bigint")
        } else if case .some(.some) = fields.splits {
            assignments.append("category_id = NULL")
        }
        if fields.splits != nil { assignments.append("splits = \(splits(fields))") }
        if let payee = fields.payee { assignments.append("payee = \(payee)::text") }
        if let note = fields.note { assignments.append("note = \(note)::text") }
        if let frequency = fields.frequency { assignments.append("frequency = \(frequency)") }
        if let firstDate = fields.firstDate { assignments.append("first_date = \(firstDate)::date") }
        if let endDate = fields.endDate { assignments.append("end_date = \(endDate)::date") }
        if let autoPost = fields.autoPost { assignments.append("auto_post = \(autoPost)") }
        return Schedules.updateStatement(id: id, setting: assignments, in: ledger)
    }

    /// A schedule under its seed id (or the next server id), with the times and version an export wrote.
    ///
    /// An export does not hold what the poster handled (`posted_through`, no member), so the seed finds it in
    /// the transactions it loaded before the schedules (`TypedResources.all`): the last occurrence posted is
    /// the latest transaction whose import id is `schedule:<id>:<its date>`. A posted transaction deleted
    /// before the export is then not posted again, unless it was the last one; a schedule posted by hand has
    /// none, and the poster lets its past occurrences pass at its first run.
    static func seedInsert(_ record: SeedRecord<ScheduleFields>, today: Query, in ledger: LedgerID) -> Query {
        let fields = record.fields
        return """
            WITH n AS (SELECT coalesce(\(fields.id)::bigint, nextval('schedules_id_seq')) AS id)
            INSERT INTO schedules (ledger_id, id, \(columns), posted_through, created_at, updated_at, version)
            SELECT \(ledger), n.id, \(values(fields, today: today)),
                   (SELECT max(t.date) FROM transactions t
                    WHERE t.ledger_id = \(ledger) AND t.import_id = 'schedule:' || n.id || ':' || to_char(t.date, 'YYYY-MM-DD')),
                   coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                   coalesce(\(record.version)::integer, 1)
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
