import Postgres

/// The SQL behind the transaction routes; the only place that knows transactions' column names.
enum TransactionQueries {
    /// A transaction row `t` as plain columns, in the JSON's member order (README, "A walk through with curl").
    static let record = PlainRecord([
        ("id", "t.id", .number),
        ("categoryId", "t.category_id", .number),
        ("title", "t.title", .string),
        ("amount", "t.amount", .number),
        ("date", "t.date", .date),
        ("note", "t.note", .string),
        ("createdAt", "t.created_at", .timestamp),
        ("updatedAt", "t.updated_at", .timestamp),
        ("version", "t.version", .number),
    ])

    /// The JSON object of transaction row `t`, optionally with its category under `category`.
    static func json(expandingCategory: Bool) -> Query {
        let columns = record.renderedColumns
        guard expandingCategory else { return SQLFragments.jsonObject(columns: columns) }
        let category = CategoryQueries.jsonObject(where: "c.id = t.category_id")
        return SQLFragments.jsonObject(columns: "\(columns), \(category) AS category")
    }

    /// A scalar subquery: the JSON array, in id order, of the transactions that `condition` picks (over alias `t`).
    static func jsonArray(where condition: Query) -> Query {
        let element = json(expandingCategory: false)
        return "(SELECT \(SQLFragments.jsonArray(of: element, orderBy: "t.id"))::json FROM transactions t WHERE \(condition))"
    }

    /// The transaction's JSON rendered in SQL, for `_expand=category`.
    static func find(id: Int64, expandingCategory: Bool) -> Query {
        "SELECT \(json(expandingCategory: expandingCategory)) FROM transactions t WHERE t.id = \(id)"
    }

    /// The transaction's `record` columns; no row when there is no such transaction.
    static func find(id: Int64) -> Query {
        "SELECT \(record.columns) FROM transactions t WHERE t.id = \(id)"
    }

    /// Writes answer (id, created, `record` columns) from the written row `t` (see `TypedResource`).
    private static let answer: Query = "\(record.columns) FROM t"

    /// Inserts under the client's id, or the next server id when it gave none; the date defaults to today.
    static func insert(_ fields: TransactionFields) -> Query {
        """
        WITH t AS (
            INSERT INTO transactions (id, category_id, title, amount, date, note)
            VALUES (coalesce(\(fields.id)::bigint, nextval('transactions_id_seq')), \(fields.categoryID), \(fields.title),
                    \(fields.amount), coalesce(\(fields.date)::date, \(SQLFragments.todayUTC)), \(fields.note ?? nil)::text)
            RETURNING *)
        SELECT t.id, true, \(answer)
        """
    }

    /// PUT: replaces the transaction with this id, or creates it under this id; the first column says which.
    static func replace(id: Int64, with fields: TransactionFields) -> Query {
        """
        WITH t AS (
            INSERT INTO transactions AS existing (id, category_id, title, amount, date, note)
            VALUES (\(id), \(fields.categoryID), \(fields.title), \(fields.amount),
                    coalesce(\(fields.date)::date, \(SQLFragments.todayUTC)), \(fields.note ?? nil)::text)
            ON CONFLICT (id) DO UPDATE
                SET category_id = excluded.category_id, title = excluded.title, amount = excluded.amount,
                    date = excluded.date, note = excluded.note,
                    version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT t.id, t.inserted, \(answer)
        """
    }

    /// PATCH: changes only the fields given; no row means no such transaction.
    static func update(id: Int64, with fields: TransactionFields) -> Query {
        var assignments: Query = "version = version + 1, updated_at = now()"
        if let categoryID = fields.categoryID { assignments.append(", category_id = \(categoryID)") }
        if let title = fields.title { assignments.append(", title = \(title)") }
        if let amount = fields.amount { assignments.append(", amount = \(amount)") }
        if let date = fields.date { assignments.append(", date = \(date)::date") }
        if let note = fields.note { assignments.append(", note = \(note)::text") }
        return """
            WITH t AS (UPDATE transactions SET \(assignments) WHERE id = \(id) RETURNING *)
            SELECT t.id, false, \(answer)
            """
    }

    static func delete(id: Int64) -> Query {
        """
        WITH t AS (DELETE FROM transactions WHERE id = \(id) RETURNING *)
        SELECT t.id, false, \(answer)
        """
    }
}
