import Postgres

/// The SQL a seed writes: typed records with their bookkeeping kept, documents in batches, and the wipe.
enum SeedQueries {
    /// True when no category, transaction or generic collection exists.
    static let isEmpty: Query = """
        SELECT NOT EXISTS (SELECT 1 FROM categories) AND NOT EXISTS (SELECT 1 FROM transactions)
            AND NOT EXISTS (SELECT 1 FROM collections)
        """

    /// Deletes everything a seed defines; row by row rather than TRUNCATE, so row triggers (sync's change
    /// log) see each deletion. Documents go with their collections (ON DELETE CASCADE).
    static let wipe = "DELETE FROM transactions; DELETE FROM categories; DELETE FROM collections;"

    /// A category under its seed id (or the next server id), with the times and version an export wrote.
    static func insert(_ record: SeedPlan.TypedRecord<CategoryFields>) -> Query {
        let fields = record.fields
        return """
            INSERT INTO categories (id, title, amount, created_at, updated_at, version)
            VALUES (coalesce(\(fields.id)::bigint, nextval('categories_id_seq')), \(fields.title), \(fields.amount),
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }

    /// A transaction under its seed id (or the next server id); `date` defaults to today as over the API.
    static func insert(_ record: SeedPlan.TypedRecord<TransactionFields>) -> Query {
        let fields = record.fields
        return """
            INSERT INTO transactions (id, category_id, title, amount, date, note, created_at, updated_at, version)
            VALUES (coalesce(\(fields.id)::bigint, nextval('transactions_id_seq')), \(fields.categoryID), \(fields.title),
                    \(fields.amount), coalesce(\(fields.date)::date, \(SQLFragments.todayUTC)), \(fields.note ?? nil)::text,
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }

    /// Inserts records in the order given, so `position` keeps the file's order.
    static func insert(keys: [String], bodies: [String], into collection: String) -> Query {
        """
        INSERT INTO documents (collection, id, body)
        SELECT \(collection), r.id, r.body::json
        FROM unnest(\(keys)::text[], \(bodies)::text[]) WITH ORDINALITY AS r(id, body, n)
        ORDER BY r.n
        """
    }
}
