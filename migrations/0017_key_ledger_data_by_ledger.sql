-- Every table of a ledger's data gets ledger_id as the first column of its primary key, every foreign key
-- carries it, and importId and Idempotency-Key are unique per ledger; the change feed is numbered per
-- ledger (docs/change-feed.md). The rows that exist become ledger 1's, with their
-- ids, versions, seqs, purge horizon and sequences unchanged: existing clients go on from their lastSeq
-- with no 410, no repeat and no miss. After this migration every statement names its ledger: the DEFAULT 1
-- that fills the existing rows is dropped at the end.
--
-- Not for a rolling deploy: an older process's statements (ON CONFLICT (id), the one-row change_feed_state)
-- fail against the new keys. Stop every server, migrate, start the new ones.

-- Older sequencer runs and purges wait here, and so do writers: nothing may capture or stamp while the
-- tables change shape.
SELECT pg_advisory_xact_lock(7089063307574158691);
LOCK TABLE categories, transactions, budgets, collections, documents, change_log, change_pending,
    change_feed_state, idempotency_keys IN ACCESS EXCLUSIVE MODE;
-- ---------------------------------------------------------------------------------------------------------
-- ledger_id on every table of a ledger's data
-- ---------------------------------------------------------------------------------------------------------

-- NOT NULL DEFAULT 1 is a catalog change (PostgreSQL 11's fast default): no table is rewritten, and every row
-- that exists reads 1. The default goes at the end of this file.
ALTER TABLE categories       ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE transactions     ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE budgets          ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE collections      ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE documents        ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE change_log       ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE change_pending   ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE change_feed_state ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;
ALTER TABLE idempotency_keys ADD COLUMN ledger_id bigint NOT NULL DEFAULT 1;

-- The keys the children point at go first; every constraint keeps its name (Errors/DatabaseErrors.swift
-- maps them by name).
ALTER TABLE transactions DROP CONSTRAINT transactions_category_id_fkey;
ALTER TABLE budgets      DROP CONSTRAINT budgets_category_id_fkey;
ALTER TABLE documents    DROP CONSTRAINT documents_collection_fkey;

-- Only the tables no other ledger-keyed parent covers point at ledgers (a transaction's ledger is its
-- category's): each such check locks the ledger row KEY SHARE, which a version bump (NO KEY UPDATE) never blocks.
ALTER TABLE categories
    DROP CONSTRAINT categories_pkey,
    ADD CONSTRAINT categories_pkey PRIMARY KEY (ledger_id, id),
    ADD CONSTRAINT categories_ledger_id_fkey FOREIGN KEY (ledger_id) REFERENCES ledgers (id) ON DELETE CASCADE;
DROP INDEX categories_title_unique;
CREATE UNIQUE INDEX categories_title_unique ON categories (ledger_id, lower(title));
COMMENT ON INDEX categories_title_unique IS 'Titles are unique ignoring case within a ledger; the API maps a violation to 409.';

ALTER TABLE transactions
    DROP CONSTRAINT transactions_pkey,
    ADD CONSTRAINT transactions_pkey PRIMARY KEY (ledger_id, id),
    ADD CONSTRAINT transactions_category_id_fkey FOREIGN KEY (ledger_id, category_id)
        REFERENCES categories (ledger_id, id) ON DELETE CASCADE;
DROP INDEX transactions_category_id_idx;
CREATE INDEX transactions_category_id_idx ON transactions (ledger_id, category_id, id);
DROP INDEX transactions_category_date_idx;
CREATE INDEX transactions_category_date_idx ON transactions (ledger_id, category_id, date) INCLUDE (amount);
COMMENT ON INDEX transactions_category_date_idx IS
    'A category''s transactions by date, with their amounts: the month figures sum them without the table.';
DROP INDEX transactions_import_id_unique;
CREATE UNIQUE INDEX transactions_import_id_unique ON transactions (ledger_id, import_id) WHERE import_id IS NOT NULL;
COMMENT ON INDEX transactions_import_id_unique IS
    'Each import id names one transaction of its ledger: a statement imported again, or one that overlaps it, skips the rows already here.';

ALTER TABLE budgets
    DROP CONSTRAINT budgets_pkey,
    DROP CONSTRAINT budgets_category_month_unique,
    ADD CONSTRAINT budgets_pkey PRIMARY KEY (ledger_id, id),
    ADD CONSTRAINT budgets_category_month_unique UNIQUE (ledger_id, category_id, month),
    ADD CONSTRAINT budgets_category_id_fkey FOREIGN KEY (ledger_id, category_id)
        REFERENCES categories (ledger_id, id) ON DELETE CASCADE;

ALTER TABLE collections
    DROP CONSTRAINT collections_pkey,
    ADD CONSTRAINT collections_pkey PRIMARY KEY (ledger_id, name),
    ADD CONSTRAINT collections_ledger_id_fkey FOREIGN KEY (ledger_id) REFERENCES ledgers (id) ON DELETE CASCADE;

ALTER TABLE documents
    DROP CONSTRAINT documents_pkey,
    ADD CONSTRAINT documents_pkey PRIMARY KEY (ledger_id, collection, id),
    ADD CONSTRAINT documents_collection_fkey FOREIGN KEY (ledger_id, collection)
        REFERENCES collections (ledger_id, name) ON DELETE CASCADE;
DROP INDEX documents_collection_position_idx;
CREATE INDEX documents_collection_position_idx ON documents (ledger_id, collection, position);
-- documents_doc_idx (GIN, doc jsonb_path_ops) stays: a containment probe finds the documents of every ledger
-- and the ledger and collection predicates filter them (btree_gin could put ledger_id into it).

-- The feed: a record is one row per ledger, a seq is dense per ledger, tombstones are purged by age in all.
ALTER TABLE change_log
    DROP CONSTRAINT change_log_pkey,
    ADD CONSTRAINT change_log_pkey PRIMARY KEY (ledger_id, collection, record_key);
DROP INDEX change_log_seq_key;
CREATE UNIQUE INDEX change_log_seq_key ON change_log (ledger_id, seq);
-- change_log_tombstone_idx (changed_at) WHERE op = 'delete' stays: the purge takes every ledger's at once.

ALTER TABLE change_feed_state
    DROP COLUMN singleton,   -- with its primary key and its one-row check
    ADD CONSTRAINT change_feed_state_pkey PRIMARY KEY (ledger_id),
    ADD CONSTRAINT change_feed_state_ledger_id_fkey FOREIGN KEY (ledger_id) REFERENCES ledgers (id) ON DELETE CASCADE;

ALTER TABLE idempotency_keys
    DROP CONSTRAINT idempotency_keys_pkey,
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (ledger_id, key),
    ADD CONSTRAINT idempotency_keys_ledger_id_fkey FOREIGN KEY (ledger_id) REFERENCES ledgers (id) ON DELETE CASCADE;

-- change_log and change_pending have no foreign key: the sequencer and every writer would pay its check per
-- row. delete_ledger() removes their rows, and a run drops pending changes of a ledger that has no state.

-- Every ledger has its feed state from its first moment.
CREATE FUNCTION create_feed_state() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_feed_state (ledger_id) SELECT id FROM created;
    RETURN NULL;
END;
$$;
CREATE TRIGGER ledgers_create_feed_state AFTER INSERT ON ledgers REFERENCING NEW TABLE AS created
    FOR EACH STATEMENT EXECUTE FUNCTION create_feed_state();

COMMENT ON TRIGGER ledgers_create_feed_state ON ledgers IS 'Gives every new ledger its change feed state (seqs from 1).';

CREATE FUNCTION delete_ledger(ledger bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    -- The sequencer's key: no run may stamp this ledger's changes while it goes.
    PERFORM pg_advisory_xact_lock(7089063307574158691);
    DELETE FROM ledgers WHERE id = ledger;   -- cascades to its data, members, tokens, feed state and keys
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    DELETE FROM change_log WHERE ledger_id = ledger;
    DELETE FROM change_pending WHERE ledger_id = ledger;   -- the cascade's own tombstones included
    RETURN true;
END;
$$;

COMMENT ON FUNCTION delete_ledger(bigint) IS
    'Deletes a ledger with everything in it, its feed included; false when there was none (DELETE /ledgers/{id}).';

-- ---------------------------------------------------------------------------------------------------------
-- The capture: each change carries its row's ledger
-- ---------------------------------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION capture_typed_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    id_sequence regclass := TG_ARGV[0];
BEGIN
    -- One id sequence per table for every ledger: moved past any id a client chose in any ledger, so a
    -- server-assigned id collides with none in any ledger.
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
    SELECT n.ledger_id, TG_TABLE_NAME, n.id::text, to_json(n.id), 'upsert', n.version
    FROM inserted n
    WHERE n.id <= coalesce(pg_sequence_last_value(id_sequence), 0) OR move_id_sequence_past(id_sequence, n.id);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION capture_typed_updates() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    id_sequence regclass := TG_ARGV[0];
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
    SELECT o.ledger_id, TG_TABLE_NAME, o.id::text, to_json(o.id), 'delete', o.version
    FROM replaced o WHERE NOT EXISTS (SELECT 1 FROM updated n WHERE n.ledger_id = o.ledger_id AND n.id = o.id)
    UNION ALL
    SELECT n.ledger_id, TG_TABLE_NAME, n.id::text, to_json(n.id), 'upsert', n.version
    FROM updated n
    WHERE n.id <= coalesce(pg_sequence_last_value(id_sequence), 0) OR move_id_sequence_past(id_sequence, n.id);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION capture_typed_deletes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
    SELECT o.ledger_id, TG_TABLE_NAME, o.id::text, to_json(o.id), 'delete', o.version FROM deleted o;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION capture_document_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
    SELECT n.ledger_id, n.collection, n.id,
           CASE WHEN n.id = '' THEN 'null'::json ELSE coalesce(n.body -> 'id', to_json(n.id)) END, 'upsert', n.version
    FROM inserted n;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION capture_document_updates() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
    SELECT o.ledger_id, o.collection, o.id,
           CASE WHEN o.id = '' THEN 'null'::json ELSE coalesce(o.body -> 'id', to_json(o.id)) END, 'delete', o.version
    FROM replaced o
    WHERE NOT EXISTS (SELECT 1 FROM updated n WHERE n.ledger_id = o.ledger_id AND n.collection = o.collection AND n.id = o.id)
    UNION ALL
    SELECT n.ledger_id, n.collection, n.id,
           CASE WHEN n.id = '' THEN 'null'::json ELSE coalesce(n.body -> 'id', to_json(n.id)) END, 'upsert', n.version
    FROM updated n;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION capture_document_deletes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
    SELECT o.ledger_id, o.collection, o.id,
           CASE WHEN o.id = '' THEN 'null'::json ELSE coalesce(o.body -> 'id', to_json(o.id)) END, 'delete', o.version
    FROM deleted o;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION capture_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'documents' THEN
        INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
        SELECT d.ledger_id, d.collection, d.id,
               CASE WHEN d.id = '' THEN 'null'::json ELSE coalesce(d.body -> 'id', to_json(d.id)) END, 'delete', d.version
        FROM documents d;
    ELSE
        EXECUTE format($sql$
            INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version)
            SELECT r.ledger_id, %L, r.id::text, to_json(r.id), 'delete', r.version FROM %I r$sql$, TG_TABLE_NAME, TG_TABLE_NAME);
    END IF;
    RETURN NULL;
END;
$$;

-- ---------------------------------------------------------------------------------------------------------
-- The sequencer, per ledger
-- ---------------------------------------------------------------------------------------------------------

-- One run, as in migrations/0013: the same lock, one snapshot taken after it, one statement. Each ledger's
-- changes are numbered from that ledger's own last_seq, in write order, and each touched ledger's last_seq
-- moves on, in the run's transaction: docs/change-feed.md's proof holds per ledger unchanged. Changes of a
-- ledger without feed state (deleted meanwhile) are dropped. The NOTIFY names the ledgers and their new
-- positions ("1:5012,7:40"), or '*' when that would not fit in a payload.
CREATE FUNCTION stamp_change_feed(batch_limit integer, OUT stamped integer, OUT touched text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'on', true);
    PERFORM pg_advisory_xact_lock(7089063307574158691);

    WITH batch AS (
        DELETE FROM change_pending
        WHERE ctid = ANY (ARRAY(SELECT ctid FROM change_pending ORDER BY position LIMIT batch_limit))
        RETURNING *),
    latest AS (
        SELECT DISTINCT ON (ledger_id, collection, record_key) *
        FROM batch
        ORDER BY ledger_id, collection, record_key, position DESC),
    numbered AS (
        SELECT latest.ledger_id, latest.collection, latest.record_key, latest.record_id, latest.op, latest.version,
               latest.changed_at,
               s.last_seq + row_number() OVER (PARTITION BY latest.ledger_id ORDER BY latest.position) AS seq
        FROM latest JOIN change_feed_state s ON s.ledger_id = latest.ledger_id),
    written AS (
        INSERT INTO change_log AS l (ledger_id, collection, record_key, record_id, op, version, seq, changed_at)
        SELECT ledger_id, collection, record_key, record_id, op, version, seq, changed_at FROM numbered
        ON CONFLICT (ledger_id, collection, record_key) DO UPDATE
            SET record_id = excluded.record_id, op = excluded.op, version = excluded.version,
                seq = excluded.seq, changed_at = excluded.changed_at
        RETURNING l.ledger_id, l.seq),
    moved AS (
        UPDATE change_feed_state s SET last_seq = w.last_seq
        FROM (SELECT ledger_id, max(seq) AS last_seq, count(*) AS records FROM written GROUP BY ledger_id) w
        WHERE s.ledger_id = w.ledger_id
        RETURNING s.ledger_id, s.last_seq, w.records)
    SELECT coalesce(sum(records), 0)::integer, string_agg(ledger_id || ':' || last_seq, ',' ORDER BY ledger_id)
    INTO stamped, touched
    FROM moved;

    IF stamped > 0 THEN
        touched := CASE WHEN octet_length(touched) < 8000 THEN touched ELSE '*' END;
        PERFORM pg_notify('budget_changes', touched);
    END IF;
END;
$$;

COMMENT ON FUNCTION stamp_change_feed(integer) IS
    'Sequencer run: moves up to batch_limit committed changes from change_pending into change_log, numbered per ledger '
    'in write order, and notifies budget_changes with ledger:last_seq of each ledger it touched; answers how many records '
    'it stamped and that payload (NULL when none), which the server''s own long-polls wake on before the NOTIFY arrives.';

-- The one-number form the server used before, kept for psql and older scripts.
CREATE OR REPLACE FUNCTION advance_change_feed(batch_limit integer DEFAULT 1000) RETURNS integer
LANGUAGE sql AS $$
    SELECT stamped FROM stamp_change_feed(batch_limit);
$$;

COMMENT ON FUNCTION advance_change_feed(integer) IS
    'Sequencer run (stamp_change_feed) answering only how many records it stamped.';

CREATE OR REPLACE FUNCTION purge_change_tombstones(retention interval) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    purged_count bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(7089063307574158691);
    WITH purged AS (
        DELETE FROM change_log
        WHERE op = 'delete' AND seq IS NOT NULL AND changed_at < now() - retention
        RETURNING ledger_id, seq),
    per_ledger AS (
        SELECT ledger_id, count(*) AS tombstones, max(seq) AS through FROM purged GROUP BY ledger_id),
    horizon AS (
        UPDATE change_feed_state s SET purged_seq = greatest(s.purged_seq, p.through)
        FROM per_ledger p WHERE s.ledger_id = p.ledger_id
        RETURNING p.tombstones)
    SELECT coalesce(sum(tombstones), 0) INTO purged_count FROM horizon;
    RETURN purged_count;
END;
$$;

COMMENT ON FUNCTION purge_change_tombstones(interval) IS
    'Deletes tombstones older than retention in every ledger and moves each ledger''s purge horizon past its own; returns how many went.';

DROP FUNCTION change_feed_position();
CREATE FUNCTION change_feed_position(ledger bigint) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT last_seq FROM change_feed_state WHERE ledger_id = ledger;
$$;

COMMENT ON FUNCTION change_feed_position(bigint) IS
    'A ledger''s change feed position in this snapshot (X-Sync-Seq): every seq of that ledger up to it is in the snapshot.';

COMMENT ON TABLE change_feed_state IS
    'One row per ledger: its change feed position (the last seq stamped) and how far its tombstones have been purged.';
COMMENT ON COLUMN change_feed_state.ledger_id IS 'The ledger whose feed this is.';
COMMENT ON COLUMN change_log.ledger_id IS 'The ledger of the record; seq is dense per ledger.';
COMMENT ON COLUMN change_log.seq IS
    'Position in the ledger''s feed; the sequencer writes the row with it, shortly after the change commits (docs/change-feed.md).';
COMMENT ON COLUMN change_pending.ledger_id IS 'The ledger of the changed record, copied from its row by the capture triggers.';

-- ---------------------------------------------------------------------------------------------------------
-- Month figures and the psql conveniences, per ledger
-- ---------------------------------------------------------------------------------------------------------

DROP FUNCTION category_month(date);
DROP FUNCTION category_months(bigint, numeric, boolean, timestamptz, date, integer);

-- migrations/0014's function with the ledger first; every sub-select filters by it (the index leads with it).
CREATE FUNCTION category_months(
    ledger bigint, category bigint, budget numeric, rolls_over boolean, created timestamptz, first_month date, months integer)
RETURNS TABLE (month date, budgeted numeric, spent numeric, carried numeric, remaining numeric, count bigint)
LANGUAGE sql STABLE AS $$
SELECT m.month, m.budgeted, m.spent, m.carried, m.budgeted + m.carried - m.spent, m.count
FROM (
    SELECT g.month::date AS month,
           coalesce(o.amount, budget) AS budgeted,
           s.spent,
           s.count,
           CASE WHEN rolls_over THEN
               coalesce(h.carry, 0.00)
               + coalesce(sum(CASE WHEN g.month >= h.first THEN coalesce(o.amount, budget) - s.spent END)
                     OVER (ORDER BY g.month ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0.00)
           ELSE 0.00 END AS carried
    FROM generate_series(0, months - 1) AS n
    CROSS JOIN LATERAL (SELECT (first_month + make_interval(months => n))::date AS month) g
    LEFT JOIN LATERAL (
        SELECT f.first,
               CASE WHEN f.first < first_month THEN
                   budget * ((extract(year FROM first_month) - extract(year FROM f.first)) * 12
                             + extract(month FROM first_month) - extract(month FROM f.first))::integer
                   + coalesce((SELECT sum(b.amount - budget) FROM budgets b
                               WHERE b.ledger_id = ledger AND b.category_id = category AND b.month < first_month), 0.00)
                   - coalesce((SELECT sum(t.amount) FROM transactions t
                               WHERE t.ledger_id = ledger AND t.category_id = category AND t.date < first_month), 0.00)
               ELSE 0.00 END AS carry
        FROM (SELECT least(date_trunc('month', created AT TIME ZONE 'UTC')::date,
                           (SELECT date_trunc('month', min(t.date))::date FROM transactions t
                            WHERE t.ledger_id = ledger AND t.category_id = category),
                           (SELECT min(b.month) FROM budgets b WHERE b.ledger_id = ledger AND b.category_id = category)) AS first
              WHERE rolls_over
              OFFSET 0) f
    ) h ON true
    CROSS JOIN LATERAL (
        SELECT coalesce(sum(t.amount), 0.00) AS spent, count(*) AS count
        FROM transactions t
        WHERE t.ledger_id = ledger AND t.category_id = category
          AND t.date >= g.month AND t.date < g.month + interval '1 month'
    ) s
    LEFT JOIN budgets o ON o.ledger_id = ledger AND o.category_id = category AND o.month = g.month
) m
$$;

COMMENT ON FUNCTION category_months(bigint, bigint, numeric, boolean, timestamptz, date, integer) IS
    'One category''s month figures (month, budgeted, spent, carried, remaining, count) for `months` months from '
    'first_month; pass the ledger, and the category''s id, amount, rollover and created_at (docs/api.md, Months).';

CREATE FUNCTION category_month(ledger bigint, day date)
RETURNS TABLE (id bigint, title text, amount numeric, rollover boolean, month text,
               budgeted numeric, carried numeric, spent numeric, remaining numeric)
LANGUAGE sql STABLE AS $$
SELECT c.id, c.title, c.amount, c.rollover, to_char(f.month, 'YYYY-MM'), f.budgeted, f.carried, f.spent, f.remaining
FROM categories c
CROSS JOIN LATERAL category_months(c.ledger_id, c.id, c.amount, c.rollover, c.created_at, date_trunc('month', day)::date, 1) f
WHERE c.ledger_id = ledger
ORDER BY c.id
$$;

COMMENT ON FUNCTION category_month(bigint, date) IS
    'One ledger''s categories with their figures in the month of the given day, as GET /ledgers/{id}/categories?month=YYYY-MM answers them.';

-- psql's one-argument form keeps answering for ledger 1, the ledger a server without users serves (a read:
-- no write can land in ledger 1 through it).
CREATE FUNCTION category_month(day date)
RETURNS TABLE (id bigint, title text, amount numeric, rollover boolean, month text,
               budgeted numeric, carried numeric, spent numeric, remaining numeric)
LANGUAGE sql STABLE AS $$
SELECT * FROM category_month(1, day)
$$;

COMMENT ON FUNCTION category_month(date) IS
    'Ledger 1''s categories with their figures in the month of the given day; category_month(ledger, day) for another ledger.';

DROP VIEW category_balances;
CREATE VIEW category_balances AS
SELECT c.ledger_id,
       c.id,
       c.title,
       c.amount,
       coalesce(s.spent, 0)::numeric(14,2)            AS spent,
       (c.amount - coalesce(s.spent, 0))::numeric(14,2) AS remaining
FROM categories c
LEFT JOIN (
    SELECT ledger_id, category_id, sum(amount) AS spent
    FROM transactions
    GROUP BY ledger_id, category_id
) s ON s.ledger_id = c.ledger_id AND s.category_id = c.id;

COMMENT ON VIEW category_balances IS 'Each category of each ledger with the sum of its transactions and what remains of its budget.';
COMMENT ON COLUMN category_balances.ledger_id IS 'The ledger; add WHERE ledger_id = … to look at one household.';
COMMENT ON COLUMN category_balances.id IS 'The category id (per ledger).';
COMMENT ON COLUMN category_balances.title IS 'The category title.';
COMMENT ON COLUMN category_balances.amount IS 'The budgeted amount.';
COMMENT ON COLUMN category_balances.spent IS 'Sum of the category''s transaction amounts.';
COMMENT ON COLUMN category_balances.remaining IS 'Budgeted amount minus what was spent.';

-- ---------------------------------------------------------------------------------------------------------
-- No statement may reach ledger 1 by leaving its ledger out
-- ---------------------------------------------------------------------------------------------------------

-- The server names the ledger in every statement. A row written in psql may leave it out while the server
-- holds one ledger only (a deployment without households, or a single household): the default is that
-- ledger. Once a second ledger exists, the default is NULL and such a row is refused (not-null violation),
-- so nothing lands in ledger 1 by being forgotten. A default is evaluated only for a row that omits the
-- column, so the server's own writes never run it.
CREATE FUNCTION sole_ledger() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN count(*) = 1 THEN min(id) END FROM ledgers
$$;

COMMENT ON FUNCTION sole_ledger() IS
    'The only ledger, or NULL when there are several: the default ledger_id of rows written in psql (docs/households.md).';

ALTER TABLE categories        ALTER COLUMN ledger_id SET DEFAULT sole_ledger();
ALTER TABLE transactions      ALTER COLUMN ledger_id SET DEFAULT sole_ledger();
ALTER TABLE budgets           ALTER COLUMN ledger_id SET DEFAULT sole_ledger();
ALTER TABLE collections       ALTER COLUMN ledger_id SET DEFAULT sole_ledger();
ALTER TABLE documents         ALTER COLUMN ledger_id SET DEFAULT sole_ledger();
ALTER TABLE change_log        ALTER COLUMN ledger_id DROP DEFAULT;
ALTER TABLE change_pending    ALTER COLUMN ledger_id DROP DEFAULT;
ALTER TABLE change_feed_state ALTER COLUMN ledger_id DROP DEFAULT;
ALTER TABLE idempotency_keys  ALTER COLUMN ledger_id DROP DEFAULT;

COMMENT ON COLUMN categories.ledger_id IS 'The ledger the category belongs to; ids are per ledger.';
COMMENT ON COLUMN transactions.ledger_id IS 'The ledger; always its category''s (transactions_category_id_fkey).';
COMMENT ON COLUMN budgets.ledger_id IS 'The ledger; always its category''s (budgets_category_id_fkey).';
COMMENT ON COLUMN collections.ledger_id IS 'The ledger whose generic collection this is; names are per ledger.';
COMMENT ON COLUMN documents.ledger_id IS 'The ledger; always its collection''s (documents_collection_fkey).';
COMMENT ON COLUMN idempotency_keys.ledger_id IS 'The ledger the key was used in: a key replays only there.';
