-- A transaction's shape rules, checked once per statement instead of once per row (bench/README.md, "The
-- write path").
--
-- PostgreSQL reads a table CHECK's expression from the catalog again for every statement that writes the
-- table (a domain's once per session): the three shape CHECKs of migrations 0018 and 0019 cost a plain POST
-- about 85k instructions, more than a third of what a plain insert costs in all. The capture triggers read
-- every written row anyway (migrations/0019), and PL/pgSQL keeps its plans for the session, so the rules move
-- there, unchanged, under the same names: a write that breaks one fails its statement with check_violation
-- naming the rule, from the API, psql or an import alike. A single-category insert, the common write, pays
-- only a condition added to a test the trigger already ran.

ALTER TABLE transactions
    DROP CONSTRAINT transactions_account_or_category,
    DROP CONSTRAINT transactions_split_shape,
    DROP CONSTRAINT transactions_part_shape;

-- Raises the first rule a written transaction breaks. PL/pgSQL cannot hand a trigger's transition table to
-- another function, so each capture function finds the row and passes its columns here.
CREATE FUNCTION refuse_misshapen_transaction(id bigint, account_id bigint, category_id bigint, transfer_id bigint,
                                             parent_id bigint, split boolean, import_id text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT (account_id IS NOT NULL OR category_id IS NOT NULL OR split) THEN
        RAISE EXCEPTION 'transaction % has neither a category nor an account', id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_account_or_category', COLUMN = 'category_id';
    ELSIF split AND NOT (category_id IS NULL AND transfer_id IS NULL AND parent_id IS NULL) THEN
        RAISE EXCEPTION 'split % has a category, a transfer or a parent of its own', id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_split_shape', COLUMN = 'split';
    ELSE
        RAISE EXCEPTION 'part % of split % names an account, a transfer or an import id, or no category', id, parent_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_part_shape', COLUMN = 'parent_id';
    END IF;
END;
$$;

COMMENT ON FUNCTION refuse_misshapen_transaction(bigint, bigint, bigint, bigint, bigint, boolean, text) IS
    'Raises the shape rule a written transaction breaks (transactions_account_or_category, _split_shape, _part_shape); the capture triggers call it.';

-- The three rules as one condition, true when a row is well formed. A plain SQL function: PostgreSQL inlines
-- it into the capture triggers' queries, whose plans last the session.
CREATE FUNCTION transaction_is_well_formed(account_id bigint, category_id bigint, transfer_id bigint, parent_id bigint,
                                           split boolean, import_id text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT (account_id IS NOT NULL OR category_id IS NOT NULL OR split)                          -- account or category
       AND (NOT split OR (category_id IS NULL AND transfer_id IS NULL AND parent_id IS NULL))     -- split shape
       AND (parent_id IS NULL OR (category_id IS NOT NULL AND account_id IS NULL AND transfer_id IS NULL
                                  AND NOT split AND import_id IS NULL))                          -- part shape
$$;

COMMENT ON FUNCTION transaction_is_well_formed(bigint, bigint, bigint, bigint, boolean, text) IS
    'A transaction''s shape rules (transactions_account_or_category, _split_shape, _part_shape) as one condition; refuse_misshapen_transaction says which one a row breaks.';

CREATE OR REPLACE FUNCTION capture_transaction_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    broken record;
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version, family)
    SELECT n.ledger_id, TG_TABLE_NAME, n.id::text, to_json(n.id), 'upsert', n.version,
           CASE WHEN n.split THEN n.id ELSE n.parent_id END
    FROM inserted n
    WHERE n.id <= coalesce(pg_sequence_last_value('transactions_id_seq'), 0) OR move_id_sequence_past('transactions_id_seq', n.id);
    -- Only a row without a category can break a shape rule or belong to a split: the common insert stops here.
    IF EXISTS (SELECT 1 FROM inserted n WHERE n.category_id IS NULL OR n.split OR n.parent_id IS NOT NULL) THEN
        PERFORM refuse_misshapen_transaction(n.id, n.account_id, n.category_id, n.transfer_id, n.parent_id, n.split, n.import_id)
        FROM inserted n
        WHERE NOT transaction_is_well_formed(n.account_id, n.category_id, n.transfer_id, n.parent_id, n.split, n.import_id)
        LIMIT 1;
        -- The split check of the inserted rows (check_split_adds_up's rule), once for the statement: every
        -- split it wrote or added parts to adds up and has two parts or more, and no part hangs on a
        -- transaction that is not split.
        SELECT p.id, p.amount, s.total, s.parts INTO broken
        FROM (SELECT DISTINCT n.ledger_id, coalesce(n.parent_id, n.id) AS id
              FROM inserted n WHERE n.split OR n.parent_id IS NOT NULL) f
        JOIN transactions p ON p.ledger_id = f.ledger_id AND p.id = f.id
        CROSS JOIN LATERAL (SELECT sum(c.amount) AS total, count(*) AS parts FROM transactions c
                            WHERE c.ledger_id = p.ledger_id AND c.parent_id = p.id) s
        WHERE CASE WHEN p.split THEN s.parts < 2 OR s.total <> p.amount ELSE s.parts > 0 END
        LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'the parts of split % add up to % in % part(s), not to its amount %',
                    broken.id, coalesce(broken.total, 0), broken.parts, broken.amount
                USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_splits_add_up', COLUMN = 'splits',
                      HINT = 'a split has at least two parts, and they add up to its amount exactly';
        END IF;
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION capture_transaction_updates() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM refuse_misshapen_transaction(n.id, n.account_id, n.category_id, n.transfer_id, n.parent_id, n.split, n.import_id)
    FROM updated n
    WHERE NOT transaction_is_well_formed(n.account_id, n.category_id, n.transfer_id, n.parent_id, n.split, n.import_id)
    LIMIT 1;
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version, family)
    SELECT o.ledger_id, TG_TABLE_NAME, o.id::text, to_json(o.id), 'delete', o.version,
           CASE WHEN o.split THEN o.id ELSE o.parent_id END
    FROM replaced o WHERE NOT EXISTS (SELECT 1 FROM updated n WHERE n.ledger_id = o.ledger_id AND n.id = o.id)
    UNION ALL
    SELECT n.ledger_id, TG_TABLE_NAME, n.id::text, to_json(n.id), 'upsert', n.version,
           CASE WHEN n.split THEN n.id ELSE n.parent_id END
    FROM updated n
    WHERE n.id <= coalesce(pg_sequence_last_value('transactions_id_seq'), 0) OR move_id_sequence_past('transactions_id_seq', n.id);
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION capture_transaction_inserts() IS
    'capture_typed_inserts for transactions, with each change''s family (a split); also checks the shapes (refuse_misshapen_transaction) and the splits the statement wrote.';
COMMENT ON FUNCTION capture_transaction_updates() IS
    'capture_typed_updates for transactions, with each change''s family (a split); also checks the shapes the statement wrote (refuse_misshapen_transaction).';
