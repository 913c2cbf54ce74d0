import Postgres

/// The SQL behind `GET /changes`; the only place that knows the change log's column names.
enum ChangeFeedQueries {
    /// One statement, so one snapshot: the purge horizon, the feed position, whether the collection is
    /// known, then up to `limit + 1` changes after `since`, each with its record as plain columns.
    ///
    /// A page does not end between the changes of one split (its parent and parts, one `family` in the log,
    /// migrations/0019) that lie within `familyReach` seqs of its `limit`-th change: the page then runs on to
    /// the family's last change there, so a client never holds parts without their split (docs/change-feed.md).
    /// That look-ahead is one index range scan, and only when the page's changes include a family at all.
    ///
    /// Columns (`Column`): purged_seq, position, is_known, page_end (the page's last seq; changes after it are
    /// there to say there is more, NULL when all of them belong to the page); then per change (all NULL when there is none)
    /// seq, collection, id (JSON text), op, version; each typed resource's record columns and its row's
    /// version, in `TypedResources.all` order; the document's body and version. Only an upsert's own kind
    /// is looked up, and PostgreSQL renders no JSON: `ChangeFeed` writes each change, its record byte for
    /// byte as the record's own GET does. The extra row tells the caller whether there is more without a
    /// second count query.
    ///
    /// An upsert's record is read as it is now, which may be newer than the change the log stamped: a
    /// write commits before a sequencer run moves it into the log. So an upsert's `version` is that of the
    /// record it carries, and is NULL when the record is gone (its tombstone is still pending and follows
    /// at a higher seq): `ChangeFeed` leaves such an upsert out. A client then sees a record early and again
    /// at the same version later, never an older one after a newer (docs/change-feed.md).
    ///
    /// Everything is the ledger's: its feed state, its change rows, and each record looked up in the ledger
    /// of its change row (docs/change-feed.md).
    static func page(since: Int64, limit: Int, collection: String?, ledger: LedgerID) -> Query {
        var filter: Query = ""
        var familyFilter: Query = ""
        var known: Query = "true"
        if let collection {
            filter = " AND l.collection = \(collection)"
            familyFilter = " AND w.collection = \(collection)"
            // A collection that existed once keeps its tombstones in the log after PUT /db removed it. The typed
            // tables log under their table names (the capture triggers of migrations/0013).
            known = """
                (\(collection) = ANY (\(TypedResources.names)::text[]) \
                OR EXISTS (SELECT 1 FROM collections k WHERE k.ledger_id = \(ledger) AND k.name = \(collection)) \
                OR EXISTS (SELECT 1 FROM change_log k WHERE k.ledger_id = \(ledger) AND k.collection = \(collection)))
                """
        }
        let typedRows = Query.joined(typedLookups.indices.map { "\(Self.typedAlias($0)).*" }, separator: ", ")
        let rowVersions = Query.joined(
            typedLookups.indices.map { "\(Self.typedAlias($0)).row_version" } + ["document_row.row_version"], separator: ", ")
        return """
            WITH first_changes AS (
                SELECT l.ledger_id, l.seq, l.collection, l.record_id, l.op, l.version, l.record_key, l.family
                FROM change_log l
                WHERE l.ledger_id = \(ledger) AND l.seq > \(since)\(filter)
                ORDER BY l.seq
                LIMIT \(Int64(limit) + 1)),
            cut AS (SELECT f.seq FROM first_changes f ORDER BY f.seq OFFSET \(Int64(limit) - 1) LIMIT 1),
            reach AS (
                SELECT max(w.seq) AS seq
                FROM change_log w
                WHERE EXISTS (SELECT 1 FROM first_changes f WHERE f.family IS NOT NULL AND f.seq <= (SELECT seq FROM cut))
                  AND w.ledger_id = \(ledger) AND w.seq > (SELECT seq FROM cut)
                  AND w.seq <= (SELECT seq FROM cut) + \(Self.familyReach)\(familyFilter)
                  AND w.family IN (SELECT f.family FROM first_changes f WHERE f.family IS NOT NULL AND f.seq <= (SELECT seq FROM cut))),
            page AS (
                SELECT * FROM first_changes
                UNION ALL
                SELECT l.ledger_id, l.seq, l.collection, l.record_id, l.op, l.version, l.record_key, l.family
                FROM change_log l
                WHERE (SELECT seq FROM reach) IS NOT NULL
                  AND l.ledger_id = \(ledger) AND l.seq > (SELECT max(f.seq) FROM first_changes f)
                  AND l.seq <= (SELECT seq FROM reach)\(filter)
                UNION ALL
                (SELECT l.ledger_id, l.seq, l.collection, l.record_id, l.op, l.version, l.record_key, l.family
                FROM change_log l
                WHERE (SELECT seq FROM reach) IS NOT NULL
                  AND l.ledger_id = \(ledger) AND l.seq > (SELECT seq FROM reach)\(filter)
                ORDER BY l.seq
                LIMIT 1)),
            state AS (
                SELECT s.purged_seq, s.last_seq AS position,
                       \(known) AS is_known,
                       coalesce((SELECT seq FROM reach), (SELECT seq FROM cut)) AS page_end
                FROM change_feed_state s
                WHERE s.ledger_id = \(ledger)
                LIMIT 1)
            SELECT state.purged_seq, state.position, state.is_known, state.page_end,
                   page.seq, page.collection, page.record_id::text, page.op,
                   CASE WHEN page.op = 'delete' THEN page.version ELSE coalesce(\(rowVersions)) END,
                   \(typedRows), document_row.body
            FROM state LEFT JOIN page ON true
            \(Query.joined(typedLookups, separator: "\n"))
            LEFT JOIN LATERAL (SELECT d.body::text AS body, d.version AS row_version FROM documents d \
                WHERE page.op <> 'delete' AND page.collection <> ALL (\(TypedResources.names)::text[]) \
                AND d.ledger_id = page.ledger_id AND d.collection = page.collection AND d.id = page.record_key OFFSET 0) document_row ON true
            ORDER BY page.seq
            """
    }

    // `OFFSET 0` keeps each lookup a subquery run per change: PostgreSQL would otherwise flatten it into
    // a hash join that sums every category's transactions and reads every transaction, for each page. The
    // state CTE's `LIMIT 1` tells the planner it is one row; unanalysed, it guessed 1810 and multiplied.

    /// Per typed resource, in `TypedResources.all` order, the lateral join `typed_N` that reads an upsert's
    /// record as its own GET does, and its row's version. The key is a CASE so that a document's text key
    /// is never cast to bigint: PostgreSQL may evaluate an AND's sides in any order.
    private static let typedLookups: [Query] = TypedResources.all.enumerated().map { index, resource in
        """
        LEFT JOIN LATERAL (SELECT \(resource.shape.record.columns), \(resource.shape.version) AS row_version \
            FROM \(resource.source) \
            WHERE \(resource.alias).ledger_id = page.ledger_id \
            AND \(resource.idColumn) = CASE WHEN page.collection = \(resource.collection) AND page.op <> 'delete' \
            THEN page.record_key::bigint END OFFSET 0) \(typedAlias(index)) ON true
        """
    }

    /// The lateral join of the typed resource at `index` of `TypedResources.all`: `typed_0`, `typed_1`, …
    private static func typedAlias(_ index: Int) -> SQLIdentifier { SQLIdentifier("typed_\(index)") }

    /// The columns of `page`'s answer, by position.
    enum Column {
        static let purgedSeq = 0, position = 1, isKnown = 2, pageEnd = 3
        static let seq = 4, collection = 5, id = 6, op = 7, version = 8
        /// Where each typed resource's record columns start, in `TypedResources.all` order. Each lookup ends
        /// with its row's version, which `version` already reports.
        static let typed: [Int] = TypedResources.all.reduce(into: [version + 1]) { starts, resource in
            starts.append(starts[starts.count - 1] + resource.shape.record.columnCount + 1)
        }.dropLast()
        static let document = version + 1 + TypedResources.all.reduce(0) { $0 + $1.shape.record.columnCount + 1 }
    }

    /// The ledger's feed position as a scalar subquery, for the statements that read data with their `X-Sync-Seq`.
    ///
    /// The same as `change_feed_position(ledger)`, written out: PostgreSQL inlines a SQL function only when
    /// its body has no FROM, so calling that one planned its SELECT afresh on every read.
    static func position(_ ledger: LedgerID) -> Query {
        "(SELECT last_seq FROM change_feed_state WHERE ledger_id = \(ledger))"
    }

    /// The data version, text, as a scalar subquery: it differs between any two snapshots with a committed
    /// write of any record between them, which the position alone does not (a write commits before a sequencer
    /// run stamps it). The weak `ETag` of a list too large to hold is made of it (`ListValidator`; docs/sync.md,
    /// Validators of large answers, has the argument).
    /// Per ledger: another ledger's writes change neither part.
    static func dataVersion(_ ledger: LedgerID) -> Query {
        """
        (SELECT last_seq || '.' || (SELECT count(*) FROM change_pending WHERE ledger_id = \(ledger)) \
        FROM change_feed_state WHERE ledger_id = \(ledger))
        """
    }

    /// How far past its `limit`-th change a page looks for the rest of a split's changes: the changes of one
    /// write are stamped together, a split has at most 101 rows, and other writers' changes that interleave
    /// with them are few.
    static let familyReach: Int64 = 1000

    /// How many changes one sequencer run stamps at most.
    static let batchLimit = 1000

    /// One sequencer run (migrations/0017): answers how many records it stamped and the ledgers whose feed
    /// moved (`ChangeNotice`), and notifies the `budget_changes` channel (`SyncRoutes.channel`) with them.
    static let advance: Query = "SELECT stamped, touched FROM stamp_change_feed(\(batchLimit))"

    /// Keeps `change_pending` small: runs delete what they move, and a table scanned by every run must
    /// not keep its dead rows until autovacuum's next visit (docs/change-feed.md, "Costs").
    static let pendingMaintenance = "VACUUM (SKIP_LOCKED) change_pending"

    /// Removes tombstones older than `retention` (migrations/0009); answers how many went.
    static func purge(retention: Duration) -> Query {
        "SELECT purge_change_tombstones(make_interval(secs => \(retention.components.seconds)::double precision))"
    }
}

/// Stamps every change waiting for the sequencer, on a connection of the caller's: after migrating or
/// seeding, so that a server starts with its feed position caught up (`X-Sync-Seq` of the first lists).
public enum ChangeFeedCatchUp {
    /// Runs the sequencer until it stamps less than a full batch. Blocking: call it off the cooperative pool.
    public static func stampPending(on connection: Connection) throws {
        while try connection.query(ChangeFeedQueries.advance)[0].decode(Int.self, at: 0) >= ChangeFeedQueries.batchLimit {}
    }
}
