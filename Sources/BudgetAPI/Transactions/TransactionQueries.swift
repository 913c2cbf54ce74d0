import Postgres

/// The SQL behind the transaction routes; the only place that knows transactions' column names.
enum TransactionQueries {

    /// A scalar subquery: the JSON array, in id order, of the transactions that `condition` picks (over alias `t`).
    static func jsonArray(where condition: Query) -> Query {
        let element = SQLFragments.jsonObject(columns: TransactionRecord.shape.record.renderedColumns)
        return "(SELECT \(SQLFragments.jsonArray(of: element, orderBy: "t.id"))::json FROM transactions t WHERE \(condition))"
    }

    /// Writes answer (id, created, `record` columns) from the written row `t` (see `TypedResource`).
    private static var answer: Query { Transactions.writtenRecord }

    /// Inserts under the client's id, or the next server id when it gave none; the date defaults to `today`
    /// (`CivilClock.today`).
    static func insert(_ fields: TransactionFields, today: Query, in ledger: LedgerID) -> Query {
        """
        WITH t AS (
            INSERT INTO transactions (ledger_id, id, category_id, title, amount, date, note, import_id)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('transactions_id_seq')), \(fields.categoryID), \(fields.title),
                    \(fields.amount), coalesce(\(fields.date)::date, \(today)), \(fields.note ?? nil)::text,
                    \(fields.importID ?? nil)::text)
            RETURNING *)
        SELECT t.id, true, \(answer)
        """
    }

    /// PUT: replaces the transaction with this id, or creates it under this id; the first column says which.
    ///
    /// A body without `importId` keeps the stored one (`null` clears it): clients that predate the member
    /// replace records without knowing it, and must not free the key that keeps a statement from being
    /// imported twice (docs/import.md).
    static func replace(id: Int64, with fields: TransactionFields, today: Query, in ledger: LedgerID) -> Query {
        let importID: Query = fields.importID == nil ? "" : ", import_id = excluded.import_id"
        return """
        WITH t AS (
            INSERT INTO transactions AS existing (ledger_id, id, category_id, title, amount, date, note, import_id)
            VALUES (\(ledger), \(id), \(fields.categoryID), \(fields.title), \(fields.amount),
                    coalesce(\(fields.date)::date, \(today)), \(fields.note ?? nil)::text, \(fields.importID ?? nil)::text)
            ON CONFLICT (ledger_id, id) DO UPDATE
                SET category_id = excluded.category_id, title = excluded.title, amount = excluded.amount,
                    date = excluded.date, note = excluded.note\(importID),
                    version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT t.id, t.inserted, \(answer)
        """
    }

    /// PATCH: changes only the fields given; no row means no such transaction.
    static func update(id: Int64, with fields: TransactionFields, in ledger: LedgerID) -> Query {
        var assignments: [Query] = []
        if let categoryID = fields.categoryID { assignments.append("category_id = \(categoryID)") }
        if let title = fields.title { assignments.append("title = \(title)") }
        if let amount = fields.amount { assignments.append("amount = \(amount)") }
        if let date = fields.date { assignments.append("date = \(date)::date") }
        if let note = fields.note { assignments.append("note = \(note)::text") }
        if let importID = fields.importID { assignments.append("import_id = \(importID)::text") }
        return Transactions.updateStatement(id: id, setting: assignments, in: ledger)
    }
}

extension TransactionQueries {
    /// A transaction under its seed id (or the next server id); `date` defaults to today as over the API.
    static func seedInsert(_ record: SeedRecord<TransactionFields>, today: Query, in ledger: LedgerID) -> Query {
        let fields = record.fields
        return """
            INSERT INTO transactions (ledger_id, id, category_id, title, amount, date, note, import_id, created_at, updated_at, version)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('transactions_id_seq')), \(fields.categoryID), \(fields.title),
                    \(fields.amount), coalesce(\(fields.date)::date, \(today)), \(fields.note ?? nil)::text,
                    \(fields.importID ?? nil)::text,
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }
}
