import Postgres

/// The SQL behind the category routes; the only place that knows categories' column names.
enum CategoryQueries {

    /// Joins each category row `c` with its all-time figures `f`: the sum of its transactions and what remains.
    static let balance: Query = """
        CROSS JOIN LATERAL (SELECT s.spent, c.amount - s.spent AS remaining FROM \
        (SELECT coalesce(sum(t.amount), 0.00) AS spent FROM transactions t WHERE t.ledger_id = c.ledger_id AND t.category_id = c.id) s) f
        """

    /// What category lists select from: each row `c` with its all-time figures `f`.
    static var source: Query { Categories.source }

    /// Each category row `c` with its figures `f` in the month whose first day `month` is (a `date`
    /// expression), from `category_months` (migrations/0017). The count of months is SQL text, not a bound
    /// value, so that a prepared statement's generic plan knows it is one month (see the function). The
    /// caller scopes `c` to its ledger.
    static func source(month: Query) -> Query {
        "categories c CROSS JOIN LATERAL category_months(c.ledger_id, c.id, c.amount, c.rollover, c.created_at, \(month), 1) f"
    }

    /// The JSON object of a category row `c` with figures `f` in `shape`, optionally with its transactions.
    static func json(_ shape: RecordShape = CategoryRecord.shape, embeddingTransactions: Bool) -> Query {
        let columns = shape.record.renderedColumns
        guard embeddingTransactions else { return SQLFragments.jsonObject(columns: columns) }
        let transactions = TransactionQueries.jsonArray(where: "t.ledger_id = c.ledger_id AND t.category_id = c.id")
        return SQLFragments.jsonObject(columns: "\(columns), \(transactions) AS transactions")
    }

    /// A scalar subquery: the JSON object of the category that `condition` picks (over alias `c`).
    static func jsonObject(where condition: Query) -> Query {
        "(SELECT \(json(embeddingTransactions: false)) FROM \(source) WHERE \(condition))"
    }

    /// Whether the ledger has the category, as a boolean expression.
    static func exists(id: Int64, in ledger: LedgerID) -> Query {
        "EXISTS (SELECT 1 FROM categories c WHERE \(Categories.inLedger(ledger)) AND c.id = \(id))"
    }

    /// The category's JSON rendered in SQL over `source` (all time, or a month's; its scope names the
    /// ledger), for `_embed=transactions`.
    static func find(id: Int64, source: ListSource) -> Query {
        guard case .rendered(let element) = source.element else {
            return "SELECT \(source.shape.record.columns) FROM \(source.from) WHERE \(source.scope) AND c.id = \(id)"
        }
        return "SELECT \(element) FROM \(source.from) WHERE \(source.scope) AND c.id = \(id)"
    }

    /// Writes answer (id, created, `record` columns) from the written row `c` (see `TypedResource`).
    ///
    /// Each write's CTE is `c` with the table's own columns, so the answer reads it like the table.
    private static var answer: Query { Categories.writtenRecord }

    /// Inserts a category under the client's id, or the next server id when it gave none.
    static func insert(_ fields: CategoryFields, in ledger: LedgerID) -> Query {
        """
        WITH c AS (
            INSERT INTO categories (ledger_id, id, title, amount, rollover)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('categories_id_seq')), \(fields.title), \(fields.amount),
                    coalesce(\(fields.rollover)::boolean, false))
            RETURNING *)
        SELECT c.id, true, \(answer)
        """
    }

    /// PUT: replaces the category with this id, or creates it under this id; the first column says which.
    static func replace(id: Int64, with fields: CategoryFields, in ledger: LedgerID) -> Query {
        """
        WITH c AS (
            INSERT INTO categories AS existing (ledger_id, id, title, amount, rollover)
            VALUES (\(ledger), \(id), \(fields.title), \(fields.amount), coalesce(\(fields.rollover)::boolean, false))
            ON CONFLICT (ledger_id, id) DO UPDATE
                SET title = excluded.title, amount = excluded.amount, rollover = excluded.rollover,
                    version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT c.id, c.inserted, \(answer)
        """
    }

    /// PATCH: changes only the fields given; no row means no such category.
    static func update(id: Int64, with fields: CategoryFields, in ledger: LedgerID) -> Query {
        var assignments: [Query] = []
        if let title = fields.title { assignments.append("title = \(title)") }
        if let amount = fields.amount { assignments.append("amount = \(amount)") }
        if let rollover = fields.rollover { assignments.append("rollover = \(rollover)::boolean") }
        return Categories.updateStatement(id: id, setting: assignments, in: ledger)
    }
}

extension CategoryQueries {
    /// A category under its seed id (or the next server id), with the times and version an export wrote.
    static func seedInsert(_ record: SeedRecord<CategoryFields>, in ledger: LedgerID) -> Query {
        let fields = record.fields
        return """
            INSERT INTO categories (ledger_id, id, title, amount, rollover, created_at, updated_at, version)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('categories_id_seq')), \(fields.title), \(fields.amount),
                    coalesce(\(fields.rollover)::boolean, false),
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }
}
