import Postgres

/// The SQL behind the category routes; the only place that knows categories' column names.
enum CategoryQueries {
    /// A category row `c` with its balance `b`, each member declared once, in the JSON's order (README, "A walk
    /// through with curl").
    static let shape = RecordShape(recordName: "category", fields: [
        RecordField("id", "c.id", .integer, .stored),
        RecordField("title", "c.title", .text, .stored, isSearchable: true),
        RecordField("amount", "c.amount", .money, .stored),
        RecordField("spent", "b.spent", .money, .derived),
        RecordField("remaining", "(c.amount - b.spent)", .money, .derived),
        RecordField("createdAt", "c.created_at", .timestamp, .kept),
        RecordField("updatedAt", "c.updated_at", .timestamp, .kept),
        RecordField("version", "c.version", .integer, .kept),
    ])

    static var record: PlainRecord { shape.record }

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

    /// Deletes a category (and, by the foreign keys' cascade, its transactions), answering what it was.
    static func delete(id: Int64) -> Query {
        // The CTE's snapshot predates the delete, so `spent` still counts the transactions it removes.
        """
        WITH c AS (DELETE FROM categories WHERE id = \(id) RETURNING *)
        SELECT c.id, false, \(answer)
        """
    }
}

extension CategoryQueries {
    /// A category under its seed id (or the next server id), with the times and version an export wrote.
    static func seedInsert(_ record: SeedRecord<CategoryFields>) -> Query {
        let fields = record.fields
        return """
            INSERT INTO categories (id, title, amount, created_at, updated_at, version)
            VALUES (coalesce(\(fields.id)::bigint, nextval('categories_id_seq')), \(fields.title), \(fields.amount),
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }
}
