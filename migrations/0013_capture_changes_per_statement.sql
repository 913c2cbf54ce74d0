-- The write path of the change feed, rebuilt so that a write costs PostgreSQL little more than the plain
-- statement (docs/change-feed.md, "The write path", has the measurements behind each choice).
--
-- Before: a PL/pgSQL row trigger upserted the record's change_log row with seq NULL in the writer's
-- transaction, and a sequencer run rewrote that row again to stamp it (a second, never-HOT row version per
-- change); a BEFORE row trigger with a WHEN clause kept the id sequences ahead of client-chosen ids.
--
-- Now:
-- - Writers append. Statement-level triggers with transition tables add one narrow row per changed record
--   to change_pending, an append-only table without indexes. They fire for every writer alike (the server,
--   psql, cascaded deletes, TRUNCATE), cost one trigger call per statement rather than per row, and writers
--   never touch a row the sequencer writes.
-- - A sequencer run moves what has committed from change_pending into change_log, stamped: each change
--   row is written once, already carrying its seq. Runs are serialized by the same advisory lock and take
--   their snapshot after it, so the proof of docs/change-feed.md holds as before.
-- - Table CHECK constraints of categories and transactions become domains. PostgreSQL parses a table
--   constraint's stored expression again for every statement; a domain's is parsed once per session.

-- Old sequencer runs (other server processes of a rolling deploy) wait here, and so do writers: their
-- row triggers must not write change_log while it changes shape.
SELECT pg_advisory_xact_lock(7089063307574158691);
LOCK TABLE categories, transactions, documents, change_log IN ACCESS EXCLUSIVE MODE;

-- Every change committed under the old triggers gets its seq now, by the old run, in write order.
SELECT advance_change_feed(2147483647);

DROP TRIGGER categories_record_change ON categories;
DROP TRIGGER transactions_record_change ON transactions;
DROP TRIGGER documents_record_change ON documents;
DROP FUNCTION record_change();
DROP TRIGGER categories_keep_id_sequence_ahead ON categories;
DROP TRIGGER transactions_keep_id_sequence_ahead ON transactions;
DROP FUNCTION keep_id_sequence_ahead();

ALTER TABLE change_log DROP COLUMN pending;
DROP SEQUENCE change_log_pending_seq;
COMMENT ON COLUMN change_log.seq IS
    'Position in the global feed; the sequencer writes the row with it, shortly after the change commits (docs/change-feed.md).';
COMMENT ON COLUMN change_log.changed_at IS
    'Start time of the transaction that made the change; tombstones are purged by it.';

CREATE TABLE change_pending (
    position    bigint      GENERATED ALWAYS AS IDENTITY,
    collection  text        COLLATE "C" NOT NULL,
    record_key  text        COLLATE "C" NOT NULL,
    record_id   json        NOT NULL,
    op          text        NOT NULL,
    version     integer     NOT NULL,
    changed_at  timestamptz NOT NULL DEFAULT now()
) WITH (vacuum_truncate = false, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

COMMENT ON TABLE change_pending IS
    'Changes committed but not yet in change_log: writers append, each sequencer run moves what it sees into change_log with seqs (docs/change-feed.md).';
COMMENT ON COLUMN change_pending.position IS 'Write order; orders the changes of one sequencer run.';
COMMENT ON COLUMN change_pending.collection IS 'categories, transactions, or the name of a generic collection.';
COMMENT ON COLUMN change_pending.record_key IS 'The record''s id as text, as its table keys it; empty for a singular resource.';
COMMENT ON COLUMN change_pending.record_id IS 'The id as clients see it in JSON.';
COMMENT ON COLUMN change_pending.op IS 'upsert: the record was written; delete: it was deleted.';
COMMENT ON COLUMN change_pending.version IS 'The record''s version after the change (for a delete, the version it had).';
COMMENT ON COLUMN change_pending.changed_at IS 'Start time of the writing transaction.';

-- Ids chosen by the server come from the identity sequence; an id a client (or psql) chose beyond it moves
-- the sequence past it, so a server-assigned id never collides with it.
CREATE FUNCTION move_id_sequence_past(id_sequence regclass, chosen_id bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    -- setval is not transactional: writers that move one sequence take turns, so it only moves forward.
    PERFORM pg_advisory_xact_lock(id_sequence::oid::integer, 1);
    IF chosen_id > coalesce(pg_sequence_last_value(id_sequence), 0) THEN
        PERFORM setval(id_sequence, chosen_id);
    END IF;
    RETURN true;
END;
$$;

COMMENT ON FUNCTION move_id_sequence_past(regclass, bigint) IS
    'Moves an id sequence past an id chosen outside it, so server-assigned ids never collide with it; answers true.';

-- The capture functions of the typed tables (collection = table name, key = id). Each is a statement-level
-- trigger: one call per statement, its rows in a transition table.
CREATE FUNCTION capture_typed_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    id_sequence regclass := TG_ARGV[0];
BEGIN
    -- pg_sequence_last_value is NULL before the first nextval, when the sequence would still hand out its start.
    INSERT INTO change_pending (collection, record_key, record_id, op, version)
    SELECT TG_TABLE_NAME, n.id::text, to_json(n.id), 'upsert', n.version
    FROM inserted n
    WHERE n.id <= coalesce(pg_sequence_last_value(id_sequence), 0) OR move_id_sequence_past(id_sequence, n.id);
    RETURN NULL;
END;
$$;

CREATE FUNCTION capture_typed_updates() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    id_sequence regclass := TG_ARGV[0];
BEGIN
    -- An update that changed a record's id leaves a tombstone at the old id, before the new id's upsert.
    INSERT INTO change_pending (collection, record_key, record_id, op, version)
    SELECT TG_TABLE_NAME, o.id::text, to_json(o.id), 'delete', o.version
    FROM replaced o WHERE NOT EXISTS (SELECT 1 FROM updated n WHERE n.id = o.id)
    UNION ALL
    SELECT TG_TABLE_NAME, n.id::text, to_json(n.id), 'upsert', n.version
    FROM updated n
    WHERE n.id <= coalesce(pg_sequence_last_value(id_sequence), 0) OR move_id_sequence_past(id_sequence, n.id);
    RETURN NULL;
END;
$$;

CREATE FUNCTION capture_typed_deletes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (collection, record_key, record_id, op, version)
    SELECT TG_TABLE_NAME, o.id::text, to_json(o.id), 'delete', o.version FROM deleted o;
    RETURN NULL;
END;
$$;

-- The generic collections' records: key = (collection, id), the client's id read from the body.
CREATE FUNCTION capture_document_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (collection, record_key, record_id, op, version)
    SELECT n.collection, n.id, CASE WHEN n.id = '' THEN 'null'::json ELSE coalesce(n.body -> 'id', to_json(n.id)) END,
           'upsert', n.version
    FROM inserted n;
    RETURN NULL;
END;
$$;

CREATE FUNCTION capture_document_updates() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (collection, record_key, record_id, op, version)
    SELECT o.collection, o.id, CASE WHEN o.id = '' THEN 'null'::json ELSE coalesce(o.body -> 'id', to_json(o.id)) END,
           'delete', o.version
    FROM replaced o WHERE NOT EXISTS (SELECT 1 FROM updated n WHERE n.collection = o.collection AND n.id = o.id)
    UNION ALL
    SELECT n.collection, n.id, CASE WHEN n.id = '' THEN 'null'::json ELSE coalesce(n.body -> 'id', to_json(n.id)) END,
           'upsert', n.version
    FROM updated n;
    RETURN NULL;
END;
$$;

CREATE FUNCTION capture_document_deletes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (collection, record_key, record_id, op, version)
    SELECT o.collection, o.id, CASE WHEN o.id = '' THEN 'null'::json ELSE coalesce(o.body -> 'id', to_json(o.id)) END,
           'delete', o.version
    FROM deleted o;
    RETURN NULL;
END;
$$;

-- TRUNCATE has no transition table: every record still there is noted as deleted before it goes.
CREATE FUNCTION capture_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'documents' THEN
        INSERT INTO change_pending (collection, record_key, record_id, op, version)
        SELECT d.collection, d.id, CASE WHEN d.id = '' THEN 'null'::json ELSE coalesce(d.body -> 'id', to_json(d.id)) END,
               'delete', d.version
        FROM documents d;
    ELSE
        EXECUTE format($sql$
            INSERT INTO change_pending (collection, record_key, record_id, op, version)
            SELECT %L, r.id::text, to_json(r.id), 'delete', r.version FROM %I r$sql$, TG_TABLE_NAME, TG_TABLE_NAME);
    END IF;
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION capture_typed_inserts() IS
    'Statement trigger on a typed table: appends its inserted records to change_pending and keeps the id sequence (argument) ahead.';
COMMENT ON FUNCTION capture_typed_updates() IS
    'Statement trigger on a typed table: appends its updated records to change_pending (a tombstone where the id changed).';
COMMENT ON FUNCTION capture_typed_deletes() IS
    'Statement trigger on a typed table: appends tombstones of its deleted records to change_pending.';
COMMENT ON FUNCTION capture_document_inserts() IS
    'Statement trigger on documents: appends the inserted records to change_pending.';
COMMENT ON FUNCTION capture_document_updates() IS
    'Statement trigger on documents: appends the updated records to change_pending (a tombstone where the key changed).';
COMMENT ON FUNCTION capture_document_deletes() IS
    'Statement trigger on documents: appends tombstones of the deleted records to change_pending.';
COMMENT ON FUNCTION capture_truncate() IS
    'BEFORE TRUNCATE trigger: appends a tombstone for every record of the table to change_pending.';

CREATE TRIGGER categories_capture_inserts AFTER INSERT ON categories REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_inserts('categories_id_seq');
CREATE TRIGGER categories_capture_updates AFTER UPDATE ON categories REFERENCING OLD TABLE AS replaced NEW TABLE AS updated
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_updates('categories_id_seq');
CREATE TRIGGER categories_capture_deletes AFTER DELETE ON categories REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_deletes();
CREATE TRIGGER categories_capture_truncate BEFORE TRUNCATE ON categories
    FOR EACH STATEMENT EXECUTE FUNCTION capture_truncate();

CREATE TRIGGER transactions_capture_inserts AFTER INSERT ON transactions REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_inserts('transactions_id_seq');
CREATE TRIGGER transactions_capture_updates AFTER UPDATE ON transactions REFERENCING OLD TABLE AS replaced NEW TABLE AS updated
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_updates('transactions_id_seq');
CREATE TRIGGER transactions_capture_deletes AFTER DELETE ON transactions REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_deletes();
CREATE TRIGGER transactions_capture_truncate BEFORE TRUNCATE ON transactions
    FOR EACH STATEMENT EXECUTE FUNCTION capture_truncate();

CREATE TRIGGER documents_capture_inserts AFTER INSERT ON documents REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_document_inserts();
CREATE TRIGGER documents_capture_updates AFTER UPDATE ON documents REFERENCING OLD TABLE AS replaced NEW TABLE AS updated
    FOR EACH STATEMENT EXECUTE FUNCTION capture_document_updates();
CREATE TRIGGER documents_capture_deletes AFTER DELETE ON documents REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_document_deletes();
CREATE TRIGGER documents_capture_truncate BEFORE TRUNCATE ON documents
    FOR EACH STATEMENT EXECUTE FUNCTION capture_truncate();

COMMENT ON TRIGGER categories_capture_inserts ON categories IS 'Feeds every category insert into the change feed (change_pending).';
COMMENT ON TRIGGER categories_capture_updates ON categories IS 'Feeds every category update into the change feed (change_pending).';
COMMENT ON TRIGGER categories_capture_deletes ON categories IS 'Feeds every category delete into the change feed (change_pending).';
COMMENT ON TRIGGER categories_capture_truncate ON categories IS 'Notes every category as deleted before a TRUNCATE.';
COMMENT ON TRIGGER transactions_capture_inserts ON transactions IS 'Feeds every transaction insert into the change feed (change_pending).';
COMMENT ON TRIGGER transactions_capture_updates ON transactions IS 'Feeds every transaction update into the change feed (change_pending).';
COMMENT ON TRIGGER transactions_capture_deletes ON transactions IS 'Feeds every transaction delete, cascaded ones included, into the change feed (change_pending).';
COMMENT ON TRIGGER transactions_capture_truncate ON transactions IS 'Notes every transaction as deleted before a TRUNCATE.';
COMMENT ON TRIGGER documents_capture_inserts ON documents IS 'Feeds every generic record insert into the change feed (change_pending).';
COMMENT ON TRIGGER documents_capture_updates ON documents IS 'Feeds every generic record update into the change feed (change_pending).';
COMMENT ON TRIGGER documents_capture_deletes ON documents IS 'Feeds every generic record delete, cascaded ones included, into the change feed (change_pending).';
COMMENT ON TRIGGER documents_capture_truncate ON documents IS 'Notes every generic record as deleted before a TRUNCATE.';

-- One sequencer run: moves up to batch_limit committed changes from change_pending into change_log, each
-- record at its latest change, stamped with the next seqs in write order, and wakes long-polls.
CREATE OR REPLACE FUNCTION advance_change_feed(batch_limit integer DEFAULT 1000) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    stamped integer;
    base bigint;
BEGIN
    -- Clients may see the seqs as soon as this commits, so a crash must not be able to undo them.
    PERFORM set_config('synchronous_commit', 'on', true);
    -- Only runs (and the tombstone purge) take the key. It is released after this transaction's commit is
    -- visible, so the next run's snapshot sees this run; and no one else moves last_seq meanwhile.
    PERFORM pg_advisory_xact_lock(7089063307574158691);
    SELECT last_seq INTO base FROM change_feed_state;

    -- A new statement, so a snapshot taken after the lock. It sees every committed change and no other:
    -- a change of a transaction still open is left for a later run, which stamps it above all of these.
    -- The batch is named by its rows' addresses: a join back to the table would scan it twice.
    WITH batch AS (
        DELETE FROM change_pending
        WHERE ctid = ANY (ARRAY(SELECT ctid FROM change_pending ORDER BY position LIMIT batch_limit))
        RETURNING *)
    INSERT INTO change_log AS l (collection, record_key, record_id, op, version, seq, changed_at)
    SELECT latest.collection, latest.record_key, latest.record_id, latest.op, latest.version,
           base + row_number() OVER (ORDER BY latest.position), latest.changed_at
    FROM (SELECT DISTINCT ON (collection, record_key) *
          FROM batch
          ORDER BY collection, record_key, position DESC) latest
    ON CONFLICT (collection, record_key) DO UPDATE
        SET record_id = excluded.record_id, op = excluded.op, version = excluded.version,
            seq = excluded.seq, changed_at = excluded.changed_at;
    GET DIAGNOSTICS stamped = ROW_COUNT;

    IF stamped > 0 THEN
        UPDATE change_feed_state SET last_seq = base + stamped;
        -- Delivered at commit to every server process's LISTEN (docs/change-feed.md). Only runs notify, and
        -- they take turns anyway, so the cluster-wide lock a NOTIFY holds through the commit costs nobody.
        PERFORM pg_notify('budget_changes', (base + stamped)::text);
    END IF;
    RETURN stamped;
END;
$$;

COMMENT ON FUNCTION advance_change_feed(integer) IS
    'Sequencer run: moves up to batch_limit committed changes from change_pending into change_log with the next seqs, '
    'in write order, and notifies budget_changes; returns how many records it stamped (0: it wrote nothing).';

-- Table constraints become domains, so a write no longer parses their expressions (see the top). The view
-- over categories.title and amount goes and comes back unchanged around the type change.
CREATE DOMAIN category_title AS text
    CONSTRAINT category_title_length CHECK (char_length(VALUE) BETWEEN 1 AND 100);
CREATE DOMAIN transaction_title AS text
    CONSTRAINT transaction_title_length CHECK (char_length(VALUE) BETWEEN 1 AND 200);
CREATE DOMAIN transaction_note AS text
    CONSTRAINT transaction_note_length CHECK (char_length(VALUE) <= 2000);
CREATE DOMAIN budget_money AS numeric(14,2)
    CONSTRAINT budget_money_not_negative CHECK (VALUE >= 0);
CREATE DOMAIN record_version AS integer
    CONSTRAINT record_version_positive CHECK (VALUE >= 1);

COMMENT ON DOMAIN category_title IS 'A category title: 1-100 characters.';
COMMENT ON DOMAIN transaction_title IS 'A transaction title: 1-200 characters.';
COMMENT ON DOMAIN transaction_note IS 'A transaction note: at most 2000 characters.';
COMMENT ON DOMAIN budget_money IS 'An amount of money that is never negative, exact to the cent.';
COMMENT ON DOMAIN record_version IS 'How many writes a record has had, from 1.';

DROP VIEW category_balances;

ALTER TABLE categories
    DROP CONSTRAINT categories_title_length,
    DROP CONSTRAINT categories_amount_not_negative,
    DROP CONSTRAINT categories_version_positive,
    ALTER COLUMN title TYPE category_title,
    ALTER COLUMN amount TYPE budget_money,
    ALTER COLUMN version TYPE record_version;

ALTER TABLE transactions
    DROP CONSTRAINT transactions_title_length,
    DROP CONSTRAINT transactions_note_length,
    DROP CONSTRAINT transactions_version_positive,
    ALTER COLUMN title TYPE transaction_title,
    ALTER COLUMN note TYPE transaction_note,
    ALTER COLUMN version TYPE record_version;

CREATE VIEW category_balances AS
SELECT c.id,
       c.title,
       c.amount,
       coalesce(s.spent, 0)::numeric(14,2)            AS spent,
       (c.amount - coalesce(s.spent, 0))::numeric(14,2) AS remaining
FROM categories c
LEFT JOIN (
    SELECT category_id, sum(amount) AS spent
    FROM transactions
    GROUP BY category_id
) s ON s.category_id = c.id;

COMMENT ON VIEW category_balances IS 'Each category with the sum of its transactions and what remains of its budget.';
COMMENT ON COLUMN category_balances.id IS 'The category id.';
COMMENT ON COLUMN category_balances.title IS 'The category title.';
COMMENT ON COLUMN category_balances.amount IS 'The budgeted amount.';
COMMENT ON COLUMN category_balances.spent IS 'Sum of the category''s transaction amounts.';
COMMENT ON COLUMN category_balances.remaining IS 'Budgeted amount minus what was spent.';
