import Postgres

/// The SQL behind the category routes; the only place that knows categories' column names.
enum CategoryQueries {
    /// A category row `c` with its balance `b` as plain columns, in the JSON's member order (README, "A walk through with curl").
    static let record = PlainRecord([
        ("id", "c.id", .number),
        ("title", "c.title", .string),
        ("amount", "c.amount", .number),
        ("spent", "b.spent", .number),
        ("remaining", "c.amount - b.spent", .number),
        ("createdAt", "c.created_at", .timestamp),
        ("updatedAt", "c.updated_at", .timestamp),
        ("version", "c.version", .number),
    ])

    /// Joins each category row `c` with the sum of its transactions as `b.spent`.
    private static let balance: Query = """
        CROSS JOIN LATERAL (SELECT coalesce(sum(t.amount), 0.00) AS spent FROM transactions t WHERE t.category_id = c.id) b
        """

    /// The JSON object of category row `c` (joined with `balance`), optionally with its transactions.
    static func json(embeddingTransactions: Bool) -> Query {
        let columns = record.renderedColumns
        guard embeddingTransactions else { return SQLFragments.jsonObject(columns: columns) }
        let transactions = TransactionQueries.jsonArray(where: "t.category_id = c.id")
        return SQLFragments.jsonObject(columns: "\(columns), \(transactions) AS transactions")
    }

    /// A scalar subquery: the JSON object of the category that `condition` picks (over alias `c`).
    static func jsonObject(where condition: Query) -> Query {
        "(SELECT \(json(embeddingTransactions: false)) FROM categories c \(balance) WHERE \(condition))"
    }

    /// What category lists select from: each row `c` with its balance `b`.
    static let source: Query = "categories c \(balance)"

    /// Whether the category exists, as a boolean expression.
    static func exists(id: Int64) -> Query {
        "EXISTS (SELECT 1 FROM categories WHERE id = \(id))"
    }

    /// The category's JSON rendered in SQL, for `_embed=transactions`.
    static func find(id: Int64, embeddingTransactions: Bool) -> Query {
        "SELECT \(json(embeddingTransactions: embeddingTransactions)) FROM categories c \(balance) WHERE c.id = \(id)"
    }

    /// The category's `record` columns; no row when there is no such category.
    static func find(id: Int64) -> Query {
        "SELECT \(record.columns) FROM categories c \(balance) WHERE c.id = \(id)"
    }

    /// Writes answer (id, created, `record` columns) from the written row `c` (see `TypedResource`).
    ///
    /// Each write's CTE is `c` with the table's own columns, so the answer reads it like the table.
    private static let answer: Query = "\(record.columns) FROM c \(balance)"

    /// Inserts a category under the client's id, or the next server id when it gave none.
    static func insert(_ fields: CategoryFields) -> Query {
        """
        WITH c AS (
            INSERT INTO categories (id, title, amount)
            VALUES (coalesce(\(fields.id)::bigint, nextval('categories_id_seq')), \(fields.title), \(fields.amount))
            RETURNING *)
        SELECT c.id, true, \(answer)
        """
    }

    /// PUT: replaces the category with this id, or creates it under this id; the first column says which.
    static func replace(id: Int64, with fields: CategoryFields) -> Query {
        """
        WITH c AS (
            INSERT INTO categories AS existing (id, title, amount) VALUES (\(id), \(fields.title), \(fields.amount))
            ON CONFLICT (id) DO UPDATE
                SET title = excluded.title, amount = excluded.amount,
                    version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT c.id, c.inserted, \(answer)
        """
    }

    /// PATCH: changes only the fields given; no row means no such category.
    static func update(id: Int64, with fields: CategoryFields) -> Query {
        var assignments: Query = "version = version + 1, updated_at = now()"
        if let title = fields.title { assignments.append(", title = \(title)") }
        if let amount = fields.amount { assignments.append(", amount = \(amount)") }
        return """
            WITH c AS (UPDATE categories SET \(assignments) WHERE id = \(id) RETURNING *)
            SELECT c.id, false, \(answer)
            """
    }

    /// Deletes a category (and, by the foreign key's cascade, its transactions), answering what it was.
    static func delete(id: Int64) -> Query {
        // The CTE's snapshot predates the delete, so `spent` still counts the transactions it removes.
        """
        WITH c AS (DELETE FROM categories WHERE id = \(id) RETURNING *)
        SELECT c.id, false, \(answer)
        """
    }
}
