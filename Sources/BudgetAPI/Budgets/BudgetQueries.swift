import Postgres

/// The SQL behind the budget routes; the only place that knows budgets' column names.
enum BudgetQueries {
    /// The budget of one category and month; no row when it has none.
    static func find(categoryID: Int64, month: Month, in ledger: LedgerID) -> Query {
        """
        SELECT \(BudgetRecord.shape.record.columns) FROM budgets b
        WHERE \(Budgets.inLedger(ledger)) AND b.category_id = \(categoryID) AND b.month = \(month.sql)
        """
    }

    /// Writes answer (id, created, `record` columns) from the written row `b` (see `TypedResource`).
    private static var answer: Query { Budgets.writtenRecord }

    /// Inserts under the client's id, or the next server id when it gave none.
    static func insert(_ fields: BudgetFields, in ledger: LedgerID) -> Query {
        """
        WITH b AS (
            INSERT INTO budgets (ledger_id, id, category_id, month, amount)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('budgets_id_seq')), \(fields.categoryID),
                    \(fields.month?.firstDay)::date, \(fields.amount))
            RETURNING *)
        SELECT b.id, true, \(answer)
        """
    }

    /// PUT /budgets/:id: replaces the budget with this id, or creates it under this id; the first column says which.
    static func replace(id: Int64, with fields: BudgetFields, in ledger: LedgerID) -> Query {
        """
        WITH b AS (
            INSERT INTO budgets AS existing (ledger_id, id, category_id, month, amount)
            VALUES (\(ledger), \(id), \(fields.categoryID), \(fields.month?.firstDay)::date, \(fields.amount))
            ON CONFLICT (ledger_id, id) DO UPDATE
                SET category_id = excluded.category_id, month = excluded.month, amount = excluded.amount,
                    version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT b.id, b.inserted, \(answer)
        """
    }

    /// PUT /categories/:id/budgets/:month: sets the month's budget, creating it or replacing its amount;
    /// the first column says which.
    static func set(categoryID: Int64, month: Month, amount: Money?, in ledger: LedgerID) -> Query {
        """
        WITH b AS (
            INSERT INTO budgets AS existing (ledger_id, id, category_id, month, amount)
            VALUES (\(ledger), nextval('budgets_id_seq'), \(categoryID), \(month.sql), \(amount))
            ON CONFLICT (ledger_id, category_id, month) DO UPDATE
                SET amount = excluded.amount, version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT b.id, b.inserted, \(answer)
        """
    }

    /// PATCH: changes only the fields given; no row means no such budget.
    static func update(id: Int64, with fields: BudgetFields, in ledger: LedgerID) -> Query {
        var assignments: [Query] = []
        if let categoryID = fields.categoryID { assignments.append("category_id = \(categoryID)") }
        if let month = fields.month { assignments.append("month = \(month.sql)") }
        if let amount = fields.amount { assignments.append("amount = \(amount)") }
        return Budgets.updateStatement(id: id, setting: assignments, in: ledger)
    }

    /// DELETE /categories/:id/budgets/:month: the month goes back to the category's amount.
    static func delete(categoryID: Int64, month: Month, in ledger: LedgerID) -> Query {
        Budgets.deleteStatement(where: "b.category_id = \(categoryID) AND b.month = \(month.sql)", in: ledger)
    }

    /// A budget under its seed id (or the next server id), with the times and version an export wrote.
    static func seedInsert(_ record: SeedRecord<BudgetFields>, in ledger: LedgerID) -> Query {
        let fields = record.fields
        return """
            INSERT INTO budgets (ledger_id, id, category_id, month, amount, created_at, updated_at, version)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('budgets_id_seq')), \(fields.categoryID),
                    \(fields.month?.firstDay)::date, \(fields.amount),
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }
}
