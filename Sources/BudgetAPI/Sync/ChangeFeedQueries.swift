import Postgres

/// The SQL behind `GET /changes`; the only place that knows the change log's column names.
enum ChangeFeedQueries {
    /// One statement, so one snapshot: the purge horizon, the feed position, whether the collection is
    /// known, then up to `limit + 1` changes after `since`, each already rendered as its JSON object.
    ///
    /// Columns: purged_seq, position, is_known, seq (NULL when no change), change (JSON text or NULL).
    /// The extra row tells the caller whether there is more without a second count query.
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
                FROM change_feed_state s),
            page AS (
                SELECT l.seq, \(change) AS change
                FROM change_log l
                WHERE l.seq > \(since)\(filter)
                ORDER BY l.seq
                LIMIT \(Int64(limit) + 1))
            SELECT state.purged_seq, state.position, state.is_known, page.seq, page.change
            FROM state LEFT JOIN page ON true
            ORDER BY page.seq
            """
    }

    /// Change row `l` as `{"seq":…,"collection":…,"id":…,"op":…,"version":…,"data":…}`; no data for a tombstone.
    private static let change: Query = """
        '{"seq":' || l.seq || ',"collection":' || to_json(l.collection)::text || ',"id":' || l.record_id::text \
        || ',"op":"' || l.op || '","version":' || l.version \
        || CASE WHEN l.op = 'delete' THEN '' ELSE ',"data":' || coalesce(\(data), 'null') END || '}'
        """

    /// The record's current JSON, exactly as its own GET renders it, read in the same snapshot as `l`.
    ///
    /// Only the matching branch runs, so a document's text key is never cast to bigint.
    private static let data: Query = """
        CASE l.collection \
        WHEN 'categories' THEN \(CategoryQueries.jsonObject(where: "c.id = l.record_key::bigint"))::text \
        WHEN 'transactions' THEN (SELECT \(TransactionQueries.json(expandingCategory: false)) \
            FROM transactions t WHERE t.id = l.record_key::bigint)::text \
        ELSE (SELECT d.body::text FROM documents d WHERE d.collection = l.collection AND d.id = l.record_key) \
        END
        """

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
