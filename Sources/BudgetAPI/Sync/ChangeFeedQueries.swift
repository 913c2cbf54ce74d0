import Postgres

/// The SQL behind `GET /changes`; the only place that knows the change log's column names.
enum ChangeFeedQueries {
    /// One statement, so one snapshot: the purge horizon, the feed position, whether the collection is
    /// known, then up to `limit + 1` changes after `since`, each with its record as plain columns.
    ///
    /// Columns (`Column`): purged_seq, position, is_known; then per change (all NULL when there is none)
    /// seq, collection, id (JSON text), op, version; the category's `CategoryQueries.record` columns, the
    /// transaction's `TransactionQueries.record` columns, the document's body. Only an upsert's own kind
    /// is looked up, and PostgreSQL renders no JSON: `ChangeFeed` writes each change, its record byte for
    /// byte as the record's own GET does. The extra row tells the caller whether there is more without a
    /// second count query.
    static func page(since: Int64, limit: Int, collection: String?) -> Query {
        var filter: Query = ""
        var known: Query = "true"
        if let collection {
            filter = " AND l.collection = \(collection)"
            // A collection that existed once keeps its tombstones in the log after PUT /db removed it. The typed
            // tables log under their table names (record_change in migrations/0009).
            known = """
                (\(collection) IN ('categories', 'transactions') \
                OR EXISTS (SELECT 1 FROM collections WHERE name = \(collection)) \
                OR EXISTS (SELECT 1 FROM change_log WHERE collection = \(collection)))
                """
        }
        return """
            WITH state AS (
                SELECT s.purged_seq, s.last_seq AS position,
                       \(known) AS is_known
                FROM change_feed_state s
                LIMIT 1),
            page AS (
                SELECT l.seq, l.collection, l.record_id, l.op, l.version, l.record_key
                FROM change_log l
                WHERE l.seq > \(since)\(filter)
                ORDER BY l.seq
                LIMIT \(Int64(limit) + 1))
            SELECT state.purged_seq, state.position, state.is_known,
                   page.seq, page.collection, page.record_id::text, page.op, page.version,
                   category_row.*, transaction_row.*, document_row.body
            FROM state LEFT JOIN page ON true
            LEFT JOIN LATERAL (SELECT \(CategoryQueries.record.columns) FROM \(CategoryQueries.source) \
                WHERE c.id = \(categoryKey) OFFSET 0) category_row ON true
            LEFT JOIN LATERAL (SELECT \(TransactionQueries.record.columns) FROM transactions t \
                WHERE t.id = \(transactionKey) OFFSET 0) transaction_row ON true
            LEFT JOIN LATERAL (SELECT d.body::text AS body FROM documents d \
                WHERE page.op <> 'delete' AND page.collection NOT IN ('categories', 'transactions') \
                AND d.collection = page.collection AND d.id = page.record_key OFFSET 0) document_row ON true
            ORDER BY page.seq
            """
    }

    // `OFFSET 0` keeps each lookup a subquery run per change: PostgreSQL would otherwise flatten it into
    // a hash join that sums every category's transactions and reads every transaction, for each page. The
    // state CTE's `LIMIT 1` tells the planner it is one row; unanalysed, it guessed 1810 and multiplied.

    /// The columns of `page`'s answer, by position.
    enum Column {
        static let purgedSeq = 0, position = 1, isKnown = 2
        static let seq = 3, collection = 4, id = 5, op = 6, version = 7
        static let category = 8
        static let transaction = category + CategoryQueries.record.columnCount
        static let document = transaction + TransactionQueries.record.columnCount
    }

    /// An upsert's key as its typed table keys it, NULL for any other change. Written as a CASE so that a
    /// document's text key is never cast to bigint: PostgreSQL may evaluate an AND's sides in any order.
    private static let categoryKey: Query =
        "CASE WHEN page.collection = 'categories' AND page.op <> 'delete' THEN page.record_key::bigint END"
    private static let transactionKey: Query =
        "CASE WHEN page.collection = 'transactions' AND page.op <> 'delete' THEN page.record_key::bigint END"

    /// The feed position as a scalar subquery, for the statements that read data with their `X-Sync-Seq`.
    ///
    /// The same as `change_feed_position()`, written out: PostgreSQL inlines a SQL function only when its
    /// body has no FROM, so calling that one planned its SELECT afresh on every read.
    static let position: Query = "(SELECT last_seq FROM change_feed_state)"

    /// How many changes one sequencer run stamps at most.
    static let batchLimit = 1000

    /// One sequencer run (migrations/0011): answers how many changes it stamped.
    static let advance: Query = "SELECT advance_change_feed(\(batchLimit))"

    /// Wakes long-polls in every server process after a batch, with the position as payload. In a
    /// transaction of its own that does not wait for a WAL flush: PostgreSQL holds a cluster-wide lock
    /// for a NOTIFY from its commit until the transaction ends.
    static let announcement = """
        BEGIN; SET LOCAL synchronous_commit = off; \
        SELECT pg_notify('\(SyncRoutes.channel)', last_seq::text) FROM change_feed_state; COMMIT
        """

    /// Removes tombstones older than `retention` (migrations/0009); answers how many went.
    static func purge(retention: Duration) -> Query {
        "SELECT purge_change_tombstones(make_interval(secs => \(retention.components.seconds)::double precision))"
    }
}
