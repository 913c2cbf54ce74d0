-- The change feed of SPEC §5: one global counter over every committed write, each record kept once at
-- its latest change, deletions kept as tombstones for a retention window.
--
-- No gaps, by design: a seq is handed out at COMMIT time, not at write time. Row triggers on the
-- tables record "this record changed" with seq NULL; a DEFERRABLE INITIALLY DEFERRED constraint
-- trigger runs as the transaction commits, takes one transaction-scoped advisory lock and only then
-- draws seqs. The lock is released after the commit is visible, so the next committer draws larger
-- seqs only once this transaction's rows can be seen: seq order equals commit order, and any snapshot
-- that shows seq N also shows every seq below N. A reader paging with `seq > since` can never skip a
-- change that commits later with a smaller seq, because there is no such change.
--
-- The trade-off: the commits of writing transactions are serialized (the lock is held through the
-- WAL flush), so write throughput is bounded by one commit at a time per database and group commit
-- cannot batch flushes. The alternative (record pg_current_xact_id() and hand out changes only below
-- the reader's snapshot xmin) keeps commits parallel but lets any long transaction, even an unrelated
-- one in psql, hold the feed back for everyone, and needs a seq that is not one integer. Budget
-- writes are small and short, so the simpler and stricter guarantee wins. A seq drawn by a
-- transaction that then fails to commit is skipped: numbers may jump, changes are never missed.
CREATE SEQUENCE change_log_seq AS bigint;

COMMENT ON SEQUENCE change_log_seq IS 'The global change counter; drawn only at commit, under the change feed lock.';

CREATE TABLE change_log (
    collection  text        NOT NULL,
    record_key  text        NOT NULL,
    record_id   json        NOT NULL,
    op          text        NOT NULL,
    version     integer     NOT NULL,
    seq         bigint,
    changed_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT change_log_pkey PRIMARY KEY (collection, record_key),
    CONSTRAINT change_log_op_known CHECK (op IN ('upsert', 'delete'))
);

-- The feed reads `seq > since ORDER BY seq`; unique, and NULL (not yet committed) rows stay out of order.
CREATE UNIQUE INDEX change_log_seq_key ON change_log (seq);
-- The purge finds old tombstones without scanning the live records.
CREATE INDEX change_log_tombstone_idx ON change_log (changed_at) WHERE op = 'delete';

COMMENT ON TABLE change_log IS 'Each record''s latest change (SPEC §5), one row per record: what GET /changes serves.';
COMMENT ON COLUMN change_log.collection IS 'categories, transactions, or the name of a generic collection.';
COMMENT ON COLUMN change_log.record_key IS 'The record''s id as text, as the record''s own table keys it; empty for a singular resource.';
COMMENT ON COLUMN change_log.record_id IS 'The id as clients see it in JSON: a number for typed records, the body''s own id for documents, null for a singular resource.';
COMMENT ON COLUMN change_log.op IS 'upsert: the record exists (its data is read from its table); delete: a tombstone.';
COMMENT ON COLUMN change_log.version IS 'The record''s version after the change (for a tombstone, the version it had when deleted).';
COMMENT ON COLUMN change_log.seq IS 'Position in the global feed, assigned at commit; NULL only inside the writing transaction.';
COMMENT ON COLUMN change_log.changed_at IS 'Start time of the transaction that made the change; tombstones are purged by it.';

CREATE TABLE change_feed_state (
    singleton   boolean NOT NULL DEFAULT true,
    purged_seq  bigint  NOT NULL DEFAULT 0,
    CONSTRAINT change_feed_state_pkey PRIMARY KEY (singleton),
    CONSTRAINT change_feed_state_single_row CHECK (singleton)
);
INSERT INTO change_feed_state DEFAULT VALUES;

COMMENT ON TABLE change_feed_state IS 'One row: how far tombstones have been purged from the change feed.';
COMMENT ON COLUMN change_feed_state.singleton IS 'Always true; keeps the table at one row.';
COMMENT ON COLUMN change_feed_state.purged_seq IS 'The largest seq of a purged tombstone; a since below it may have missed a delete (410).';

-- Row trigger on categories, transactions and documents: notes the change with seq NULL. Cascaded
-- deletes (a category's transactions, a collection's documents) fire it too.
CREATE FUNCTION record_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    old_collection text;
    old_key text;
    old_id json;
    new_collection text;
    new_key text;
    new_id json;
BEGIN
    -- Each branch reads only its own table's columns: PL/pgSQL plans an expression against the row type.
    IF TG_TABLE_NAME = 'documents' THEN
        IF TG_OP <> 'INSERT' THEN
            old_collection := OLD.collection;
            old_key := OLD.id;
            old_id := CASE WHEN OLD.id = '' THEN 'null'::json ELSE coalesce(OLD.body -> 'id', to_json(OLD.id)) END;
        END IF;
        IF TG_OP <> 'DELETE' THEN
            new_collection := NEW.collection;
            new_key := NEW.id;
            new_id := CASE WHEN NEW.id = '' THEN 'null'::json ELSE coalesce(NEW.body -> 'id', to_json(NEW.id)) END;
        END IF;
    ELSE
        IF TG_OP <> 'INSERT' THEN
            old_collection := TG_TABLE_NAME;
            old_key := OLD.id::text;
            old_id := to_json(OLD.id);
        END IF;
        IF TG_OP <> 'DELETE' THEN
            new_collection := TG_TABLE_NAME;
            new_key := NEW.id::text;
            new_id := to_json(NEW.id);
        END IF;
    END IF;
    -- A delete, or an update that moved the record to another key, leaves a tombstone at the old key.
    IF old_key IS NOT NULL AND (new_key IS NULL OR (old_collection, old_key) <> (new_collection, new_key)) THEN
        PERFORM note_change(old_collection, old_key, old_id, 'delete', OLD.version);
    END IF;
    IF new_key IS NOT NULL THEN
        PERFORM note_change(new_collection, new_key, new_id, 'upsert', NEW.version);
    END IF;
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION record_change() IS
    'Row trigger: records a write on categories, transactions or documents in change_log, seq still unassigned.';

CREATE FUNCTION note_change(collection_name text, key text, client_id json, change_op text, record_version integer)
RETURNS void
LANGUAGE sql AS $$
    INSERT INTO change_log AS existing (collection, record_key, record_id, op, version, seq, changed_at)
    VALUES (collection_name, key, client_id, change_op, record_version, NULL, now())
    ON CONFLICT (collection, record_key) DO UPDATE
        SET record_id = excluded.record_id, op = excluded.op, version = excluded.version,
            seq = NULL, changed_at = excluded.changed_at;
$$;

COMMENT ON FUNCTION note_change(text, text, json, text, integer) IS
    'Replaces a record''s entry in change_log with its newest change, pending a seq until commit.';

-- Deferred to commit; see the top of this file for why the lock makes seq order commit order.
CREATE FUNCTION assign_change_seq() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- "budget-c" in ASCII: the one key every process agrees on for the change feed.
    PERFORM pg_advisory_xact_lock(7089063307574158691);
    UPDATE change_log SET seq = nextval('change_log_seq')
    WHERE collection = NEW.collection AND record_key = NEW.record_key AND seq IS NULL;
    IF FOUND THEN
        -- Delivered after COMMIT to every LISTENer, in every server process; one per collection and
        -- transaction, since PostgreSQL folds identical notifications of one transaction.
        PERFORM pg_notify('budget_changes', NEW.collection);
    END IF;
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION assign_change_seq() IS
    'Deferred constraint trigger: at commit, under the change feed advisory lock, gives pending changes their seq and notifies listeners.';

CREATE CONSTRAINT TRIGGER change_log_assign_seq
    AFTER INSERT OR UPDATE ON change_log
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.seq IS NULL) EXECUTE FUNCTION assign_change_seq();

CREATE TRIGGER categories_record_change
    AFTER INSERT OR UPDATE OR DELETE ON categories
    FOR EACH ROW EXECUTE FUNCTION record_change();

CREATE TRIGGER transactions_record_change
    AFTER INSERT OR UPDATE OR DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION record_change();

CREATE TRIGGER documents_record_change
    AFTER INSERT OR UPDATE OR DELETE ON documents
    FOR EACH ROW EXECUTE FUNCTION record_change();

COMMENT ON TRIGGER change_log_assign_seq ON change_log IS 'Gives each pending change its seq at commit (see assign_change_seq).';
COMMENT ON TRIGGER categories_record_change ON categories IS 'Feeds every category write into change_log.';
COMMENT ON TRIGGER transactions_record_change ON transactions IS 'Feeds every transaction write, cascaded deletes included, into change_log.';
COMMENT ON TRIGGER documents_record_change ON documents IS 'Feeds every generic record write, cascaded deletes included, into change_log.';

-- Records that exist before this migration enter the feed as upserts, so a client starting from
-- since=0 sees them. The triggers above already hold their tables' locks, so no write can slip between.
INSERT INTO change_log (collection, record_key, record_id, op, version, seq)
SELECT collection, record_key, record_id, 'upsert', version, nextval('change_log_seq')
FROM (
    SELECT 'categories' AS collection, id::text AS record_key, to_json(id) AS record_id, version, 1 AS rank, id AS n
    FROM categories
    UNION ALL
    SELECT 'transactions', id::text, to_json(id), version, 2, id FROM transactions
    UNION ALL
    SELECT collection, id, CASE WHEN id = '' THEN 'null'::json ELSE coalesce(body -> 'id', to_json(id)) END,
           version, 3, position FROM documents
) existing
ORDER BY rank, n;

-- Removes tombstones older than the retention window and moves the purge horizon past them.
CREATE FUNCTION purge_change_tombstones(retention interval) RETURNS bigint
LANGUAGE sql AS $$
    WITH purged AS (
        DELETE FROM change_log
        WHERE op = 'delete' AND seq IS NOT NULL AND changed_at < now() - retention
        RETURNING seq),
    horizon AS (
        UPDATE change_feed_state SET purged_seq = greatest(purged_seq, (SELECT max(seq) FROM purged))
        WHERE EXISTS (SELECT 1 FROM purged)
        RETURNING 1)
    SELECT count(*) FROM purged;
$$;

COMMENT ON FUNCTION purge_change_tombstones(interval) IS
    'Deletes tombstones older than retention and records the largest purged seq; returns how many were purged.';
