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

    /// The columns every write names after `ledger_id` and `id`, in the order `values(_:today:)` gives them.
    private static let columns: Query = "category_id, title, amount, date, note, import_id, account_id, cleared, payee"

    /// `fields`' values for `columns`: what a create gives a member the request left out (today's date,
    /// `uncleared`, NULL).
    private static func values(_ fields: TransactionFields, today: Query) -> Query {
        """
        \(fields.categoryID ?? nil)::bigint, \(fields.title), \(fields.amount), coalesce(\(fields.date)::date, \(today)),
        \(fields.note ?? nil)::text, \(fields.importID ?? nil)::text, \(fields.accountID ?? nil)::bigint,
        coalesce(\(fields.cleared)::text, 'uncleared'), \(fields.payee ?? nil)::text
        """
    }

    /// Inserts under the client's id, or the next server id when it gave none; the date defaults to `today`
    /// (`CivilClock.today`).
    static func insert(_ fields: TransactionFields, today: Query, in ledger: LedgerID) -> Query {
        """
        WITH t AS (
            INSERT INTO transactions (ledger_id, id, \(columns))
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('transactions_id_seq')), \(values(fields, today: today)))
            RETURNING *)
        SELECT t.id, true, \(answer)
        """
    }

    /// PUT: replaces the transaction with this id, or creates it under this id; the first column says which.
    ///
    /// A body without `importId`, `accountId`, `cleared` or `payee` keeps the stored one (`null` clears
    /// them): clients that predate those members replace records without knowing them, and must neither free
    /// the key that keeps a statement from being imported twice (docs/import.md) nor take a transaction out
    /// of its account or its reconciliation (docs/accounts.md).
    static func replace(id: Int64, with fields: TransactionFields, today: Query, in ledger: LedgerID) -> Query {
        var kept: [Query] = []
        if fields.importID != nil { kept.append("import_id = excluded.import_id") }
        if fields.accountID != nil { kept.append("account_id = excluded.account_id") }
        if fields.cleared != nil { kept.append("cleared = excluded.cleared") }
        if fields.payee != nil { kept.append("payee = excluded.payee") }
        let assignments = Query.joined(
            [
                "category_id = excluded.category_id, title = excluded.title, amount = excluded.amount, date = excluded.date",
                "note = excluded.note",
            ] + kept + ["version = existing.version + 1, updated_at = now()"],
            separator: ", ")
        return """
            WITH t AS (
                INSERT INTO transactions AS existing (ledger_id, id, \(columns))
                VALUES (\(ledger), \(id), \(values(fields, today: today)))
                ON CONFLICT (ledger_id, id) DO UPDATE SET \(assignments)
                RETURNING *, xmax = 0 AS inserted)
            SELECT t.id, t.inserted, \(answer)
            """
    }

    /// PATCH: changes only the fields given; no row means no such transaction.
    static func update(id: Int64, with fields: TransactionFields, in ledger: LedgerID) -> Query {
        var assignments: [Query] = []
        if let categoryID = fields.categoryID { assignments.append("category_id = \(categoryID)::bigint") }
        if let title = fields.title { assignments.append("title = \(title)") }
        if let amount = fields.amount { assignments.append("amount = \(amount)") }
        if let date = fields.date { assignments.append("date = \(date)::date") }
        if let note = fields.note { assignments.append("note = \(note)::text") }
        if let importID = fields.importID { assignments.append("import_id = \(importID)::text") }
        if let accountID = fields.accountID { assignments.append("account_id = \(accountID)::bigint") }
        if let cleared = fields.cleared { assignments.append("cleared = \(cleared)") }
        if let payee = fields.payee { assignments.append("payee = \(payee)::text") }
        return Transactions.updateStatement(id: id, setting: assignments, in: ledger)
    }
}

extension TransactionQueries {
    /// A transaction under its seed id (or the next server id), with the other side of its transfer;
    /// `date` defaults to today as over the API. The transfer's foreign key is checked at commit
    /// (migrations/0018), so the two sides load in either order.
    static func seedInsert(_ record: SeedRecord<TransactionFields>, today: Query, in ledger: LedgerID) -> Query {
        let fields = record.fields
        return """
            INSERT INTO transactions (ledger_id, id, \(columns), transfer_id, created_at, updated_at, version)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('transactions_id_seq')), \(values(fields, today: today)),
                    \(fields.transferID)::bigint,
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }
}
