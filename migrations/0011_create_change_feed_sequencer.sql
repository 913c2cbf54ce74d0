-- The change feed's seqs are handed out by a sequencer after commit, in batches, instead of by every
-- writing transaction at its commit (docs/change-feed.md tells the whole design and its proof).
--
-- Before: a deferred trigger took one advisory lock at COMMIT, drew a seq and sent a NOTIFY, and held the
-- lock (and PostgreSQL's own NOTIFY lock) through the WAL flush. Seq order was commit order, but writing
-- transactions committed one at a time: 16 writers ran at a tenth of a plain insert's rate.
--
-- Now: a write records its change with seq NULL and a write-order number, and takes no lock. A sequencer
-- run, advance_change_feed(), is the only thing that takes the advisory lock: in a fresh snapshot it stamps
-- every committed, unstamped change with the next dense seqs; one NOTIFY follows per batch. Runs are serialized and
-- each releases the lock only after its commit is visible, so any snapshot holds the stamps of a prefix of
-- the runs: a snapshot that shows seq N shows every seq up to N, and whatever it does not show yet is
-- stamped later with a larger seq. Readers keep paging with `seq > since`. A long transaction holds back
-- only its own changes; they are stamped once it commits, above everything stamped before.

-- Holding the old writers' key while the trigger goes keeps any commit of the old kind out of the switch.
SELECT pg_advisory_xact_lock(7089063307574158691);

DROP TRIGGER change_log_assign_seq ON change_log;
DROP FUNCTION assign_change_seq();
DROP FUNCTION note_change(text, text, json, text, integer);

-- Seqs are now counted in change_feed_state.last_seq, so a seq is never skipped.
DROP SEQUENCE change_log_seq;

CREATE SEQUENCE change_log_pending_seq AS bigint;
COMMENT ON SEQUENCE change_log_pending_seq IS
    'Write order of changes not yet stamped; orders the changes within one sequencer batch.';

ALTER TABLE change_log ADD COLUMN pending bigint;
COMMENT ON COLUMN change_log.pending IS
    'Write order while seq is NULL (drawn when the change was written, without a lock); NULL once stamped.';
COMMENT ON TABLE change_log IS
    'Each record''s latest change, one row per record: what GET /changes serves (docs/change-feed.md).';
COMMENT ON COLUMN change_log.seq IS
    'Position in the global feed, stamped by advance_change_feed() shortly after the change commits; NULL until then.';

ALTER TABLE change_feed_state ADD COLUMN last_seq bigint NOT NULL DEFAULT 0;
UPDATE change_feed_state SET last_seq = greatest(purged_seq, (SELECT coalesce(max(seq), 0) FROM change_log));
COMMENT ON TABLE change_feed_state IS
    'One row: the change feed''s position (the last seq stamped) and how far tombstones have been purged.';
COMMENT ON COLUMN change_feed_state.last_seq IS
    'The largest seq stamped so far; seqs 1 to last_seq are each on a change or were superseded or purged.';

-- The row trigger of categories, transactions and documents, now writing change_log itself: plans of
-- PL/pgSQL statements are cached per session, where the SQL function it called was planned on every row.
CREATE OR REPLACE FUNCTION record_change() RETURNS trigger
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
        INSERT INTO change_log AS existing (collection, record_key, record_id, op, version, seq, pending, changed_at)
        VALUES (old_collection, old_key, old_id, 'delete', OLD.version, NULL, nextval('change_log_pending_seq'), now())
        ON CONFLICT (collection, record_key) DO UPDATE
            SET record_id = excluded.record_id, op = excluded.op, version = excluded.version,
                seq = NULL, pending = excluded.pending, changed_at = excluded.changed_at;
    END IF;
    IF new_key IS NOT NULL THEN
        INSERT INTO change_log AS existing (collection, record_key, record_id, op, version, seq, pending, changed_at)
        VALUES (new_collection, new_key, new_id, 'upsert', NEW.version, NULL, nextval('change_log_pending_seq'), now())
        ON CONFLICT (collection, record_key) DO UPDATE
            SET record_id = excluded.record_id, op = excluded.op, version = excluded.version,
                seq = NULL, pending = excluded.pending, changed_at = excluded.changed_at;
    END IF;
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION record_change() IS
    'Row trigger: records a write on categories, transactions or documents in change_log, unstamped (seq NULL).';

-- One sequencer run. Every server process calls it when its own writes commit, before GET /changes reads,
-- and on a timer (which picks up writes made with psql or by a process that died); see docs/change-feed.md.
CREATE FUNCTION advance_change_feed(batch_limit integer DEFAULT 1000) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    collections text[];
    keys text[];
    stamped integer;
    base bigint;
BEGIN
    -- Clients may already see the seqs once this commits, so a crash must not be able to undo them.
    PERFORM set_config('synchronous_commit', 'on', true);
    -- Only sequencer runs (and the tombstone purge) take the key. It is released after this transaction's
    -- commit is visible, so the next run's snapshot sees this run.
    PERFORM pg_advisory_xact_lock(7089063307574158691);

    -- A new statement, so a snapshot taken after the lock: it sees every earlier run. A change that an
    -- open transaction is rewriting is skipped, not waited for; a later run stamps whichever version wins.
    SELECT array_agg(b.collection ORDER BY b.pending), array_agg(b.record_key ORDER BY b.pending)
    INTO collections, keys
    FROM (SELECT collection, record_key, pending
          FROM change_log
          WHERE seq IS NULL
          ORDER BY pending
          LIMIT batch_limit
          FOR UPDATE SKIP LOCKED) b;

    stamped := coalesce(cardinality(collections), 0);
    IF stamped = 0 THEN
        RETURN 0;
    END IF;

    UPDATE change_feed_state SET last_seq = last_seq + stamped RETURNING last_seq - stamped INTO base;

    UPDATE change_log l
    SET seq = base + u.ord, pending = NULL
    FROM unnest(collections, keys) WITH ORDINALITY AS u(collection, record_key, ord)
    WHERE l.collection = u.collection AND l.record_key = u.record_key;

    -- No NOTIFY here: PostgreSQL takes a cluster-wide lock for it at commit and would hold it through
    -- this run's WAL flush. The caller notifies in a transaction of its own that need not wait for a flush.
    RETURN stamped;
END;
$$;

COMMENT ON FUNCTION advance_change_feed(integer) IS
    'Sequencer run: stamps up to batch_limit committed, unstamped changes with the next seqs, in write order; '
    'returns how many it stamped (0: it wrote nothing; batch_limit: call again, more may be waiting).';

-- X-Sync-Seq: one row read, where it was max(seq) over the whole log.
CREATE OR REPLACE FUNCTION change_feed_position() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT last_seq FROM change_feed_state;
$$;

COMMENT ON FUNCTION change_feed_position() IS
    'The change feed position a statement''s snapshot reflects (X-Sync-Seq): every seq up to it is in the '
    'snapshot; a change stamped later may already be in the data too, and then shows up again in the feed.';

-- The purge writes change_feed_state too; taking the sequencer's key first keeps the two from deadlocking.
CREATE OR REPLACE FUNCTION purge_change_tombstones(retention interval) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    purged_count bigint;
    purged_through bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7089063307574158691);
    WITH purged AS (
        DELETE FROM change_log
        WHERE op = 'delete' AND seq IS NOT NULL AND changed_at < now() - retention
        RETURNING seq)
    SELECT count(*), max(seq) INTO purged_count, purged_through FROM purged;
    IF purged_count > 0 THEN
        UPDATE change_feed_state SET purged_seq = greatest(purged_seq, purged_through);
    END IF;
    RETURN purged_count;
END;
$$;

COMMENT ON FUNCTION purge_change_tombstones(interval) IS
    'Deletes tombstones older than retention and records the largest purged seq; returns how many were purged.';

-- Ids chosen by the server come from the sequence and can never be ahead of it, so the trigger that moves
-- the sequence past a client's id now runs only for an id beyond what the sequence handed out. The
-- function itself (0007) still checks again under its lock. pg_sequence_last_value is NULL before the
-- first nextval, when the sequence would still hand out its start value.
DROP TRIGGER categories_keep_id_sequence_ahead ON categories;
CREATE TRIGGER categories_keep_id_sequence_ahead
    BEFORE INSERT ON categories
    FOR EACH ROW
    WHEN (NEW.id > coalesce(pg_sequence_last_value('categories_id_seq'::regclass), 0))
    EXECUTE FUNCTION keep_id_sequence_ahead();

DROP TRIGGER transactions_keep_id_sequence_ahead ON transactions;
CREATE TRIGGER transactions_keep_id_sequence_ahead
    BEFORE INSERT ON transactions
    FOR EACH ROW
    WHEN (NEW.id > coalesce(pg_sequence_last_value('transactions_id_seq'::regclass), 0))
    EXECUTE FUNCTION keep_id_sequence_ahead();

COMMENT ON TRIGGER categories_keep_id_sequence_ahead ON categories IS
    'Moves the id sequence past a client-chosen id beyond it; server-assigned ids skip it.';
COMMENT ON TRIGGER transactions_keep_id_sequence_ahead ON transactions IS
    'Moves the id sequence past a client-chosen id beyond it; server-assigned ids skip it.';
