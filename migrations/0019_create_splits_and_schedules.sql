-- Splits and schedules (docs/splits-and-schedules.md).
--
-- A split is one receipt booked against several categories: a parent transaction, which is what its account
-- counts, and two or more parts, which are what categories and months count. Nothing is counted twice: the
-- parent has no category and the parts have no account.
--
-- A schedule is a transaction that comes again (the rent, the salary): its occurrences follow a frequency,
-- and those of an autoPost schedule become transactions once each, however many servers run.

-- ---------------------------------------------------------------------------------------------------------
-- transactions: parents and parts
-- ---------------------------------------------------------------------------------------------------------

ALTER TABLE transactions
    ADD COLUMN parent_id bigint,
    ADD COLUMN split     boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT transactions_parent_id_fkey FOREIGN KEY (ledger_id, parent_id)
        REFERENCES transactions (ledger_id, id) ON DELETE CASCADE,
    DROP CONSTRAINT transactions_account_or_category,
    ADD CONSTRAINT transactions_account_or_category CHECK (account_id IS NOT NULL OR category_id IS NOT NULL OR split),
    ADD CONSTRAINT transactions_split_shape
        CHECK (NOT split OR (category_id IS NULL AND transfer_id IS NULL AND parent_id IS NULL)),
    ADD CONSTRAINT transactions_part_shape
        CHECK (parent_id IS NULL
               OR (category_id IS NOT NULL AND account_id IS NULL AND transfer_id IS NULL AND NOT split AND import_id IS NULL));

COMMENT ON COLUMN transactions.parent_id IS
    'For a part of a split, the split it belongs to: the part carries a category and its share of the amount; deleting the split deletes its parts.';
COMMENT ON COLUMN transactions.split IS
    'Whether the transaction is split into parts (parent_id names it): then it has no category of its own, and its parts add up to its amount.';
COMMENT ON CONSTRAINT transactions_account_or_category ON transactions IS
    'A transaction counts somewhere: in its category, its account, or both; a split counts through its parts.';
COMMENT ON CONSTRAINT transactions_split_shape ON transactions IS
    'A split has no category of its own (its parts do), is not a transfer side and is not a part itself.';
COMMENT ON CONSTRAINT transactions_part_shape ON transactions IS
    'A part names a category, and no account, transfer or import id: its split carries those, so that nothing counts twice.';

-- Finding a split's parts: rendering it, summing it, deleting it.
CREATE INDEX transactions_parent_id_idx ON transactions (ledger_id, parent_id) INCLUDE (amount) WHERE parent_id IS NOT NULL;
COMMENT ON INDEX transactions_parent_id_idx IS 'A split''s parts with their amounts: rendering and checking a split reads it alone.';

-- A split in an account has no category, yet it is neither income nor uncategorised spending: its parts
-- are categorised. The month figures read transactions without a category and not split.
DROP INDEX transactions_uncategorised_idx;
CREATE INDEX transactions_uncategorised_idx ON transactions (ledger_id, date) INCLUDE (amount, account_id, transfer_id)
    WHERE category_id IS NULL AND NOT split;
COMMENT ON INDEX transactions_uncategorised_idx IS
    'The transactions without a category, splits aside, by date: a month''s income and uncategorised spending.';

-- The parts of a split add up to its amount, and there are at least two. Checked at the end of each
-- statement (the server writes a split and its parts in one): in psql a split is written with its parts in
-- one INSERT (or one WITH), and an edit of parts and amount is one UPDATE (or `SET CONSTRAINTS
-- transactions_splits_add_up_on_update, transactions_splits_add_up_on_delete DEFERRED` first).
CREATE FUNCTION check_split_adds_up() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    row_ledger    bigint;
    split_id      bigint;
    split_amount  numeric;
    is_split      boolean;
    parts_total   numeric;
    parts         integer;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_ledger := OLD.ledger_id;
        split_id := OLD.parent_id;
    ELSE
        row_ledger := NEW.ledger_id;
        split_id := coalesce(NEW.parent_id, NEW.id);
    END IF;
    SELECT p.amount, p.split INTO split_amount, is_split FROM transactions p WHERE p.ledger_id = row_ledger AND p.id = split_id;
    IF NOT FOUND THEN
        RETURN NULL;  -- deleted, its parts with it
    END IF;
    -- A part deleted because its category is (the foreign key's cascade, the category row already gone):
    -- the split would lose money it still holds, so the category's deletion is refused instead.
    IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM categories k WHERE k.ledger_id = OLD.ledger_id AND k.id = OLD.category_id) THEN
        RAISE EXCEPTION 'category % holds part % of split %', OLD.category_id, OLD.id, split_id
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'categories_keep_their_split_parts',
                  HINT = 'give the parts another category (or delete their splits) first';
    END IF;
    SELECT sum(c.amount), count(*) INTO parts_total, parts
    FROM transactions c WHERE c.ledger_id = row_ledger AND c.parent_id = split_id;
    IF NOT is_split AND parts > 0 THEN
        RAISE EXCEPTION 'transaction % has parts but is not split', split_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_splits_add_up', COLUMN = 'splits';
    END IF;
    IF is_split AND (parts < 2 OR parts_total <> split_amount) THEN
        -- COLUMN names the member the write changed, by its API name, for the answer's field: the split's or a
        -- part's amount, else the parts.
        RAISE EXCEPTION 'the parts of split % add up to % in % part(s), not to its amount %',
                split_id, coalesce(parts_total, 0), parts, split_amount
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_splits_add_up',
                  COLUMN = CASE WHEN TG_OP = 'UPDATE' AND OLD.amount IS DISTINCT FROM NEW.amount THEN 'amount' ELSE 'splits' END,
                  HINT = 'a split has at least two parts, and they add up to its amount exactly';
    END IF;
    RETURN NULL;
END;
$$;

-- Only rows of splits queue an event: a plain transaction's write costs the WHEN test alone. Inserts are
-- checked once per statement instead, by the capture trigger that reads every inserted row anyway
-- (capture_transaction_inserts below): a split written with five parts costs one check, not six.
CREATE CONSTRAINT TRIGGER transactions_splits_add_up_on_update AFTER UPDATE OF amount, split ON transactions
    DEFERRABLE INITIALLY IMMEDIATE
    FOR EACH ROW WHEN ((NEW.split OR OLD.split OR NEW.parent_id IS NOT NULL)
                       AND (OLD.amount IS DISTINCT FROM NEW.amount OR OLD.split IS DISTINCT FROM NEW.split))
    EXECUTE FUNCTION check_split_adds_up();
CREATE CONSTRAINT TRIGGER transactions_splits_add_up_on_delete AFTER DELETE ON transactions
    DEFERRABLE INITIALLY IMMEDIATE
    FOR EACH ROW WHEN (OLD.parent_id IS NOT NULL)
    EXECUTE FUNCTION check_split_adds_up();

COMMENT ON FUNCTION check_split_adds_up() IS 'Refuses a split whose parts do not add up to its amount, or with fewer than two parts.';
COMMENT ON TRIGGER transactions_splits_add_up_on_update ON transactions IS 'Checks a split when its amount or a part''s changes.';
COMMENT ON TRIGGER transactions_splits_add_up_on_delete ON transactions IS 'Checks a split when one of its parts goes without it.';

-- A part stays with its split: moving it to another, or making a transaction a part of one, is refused.
CREATE FUNCTION refuse_moving_part() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transaction %: a part stays with its split', OLD.id
        USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'transactions_parts_stay', COLUMN = 'parentId',
              HINT = 'replace the split''s parts instead (PUT or PATCH of the split with splits)';
END;
$$;

CREATE TRIGGER transactions_parts_stay BEFORE UPDATE OF parent_id ON transactions
    FOR EACH ROW WHEN (OLD.parent_id IS DISTINCT FROM NEW.parent_id)
    EXECUTE FUNCTION refuse_moving_part();

COMMENT ON FUNCTION refuse_moving_part() IS 'Refuses changing which split a part belongs to.';
COMMENT ON TRIGGER transactions_parts_stay ON transactions IS 'A part belongs to one split for as long as it exists.';

-- The API's DELETE of one transaction calls this for a part (`... AND (parent_id IS NULL OR
-- refuse_deleting_part(...))`): a part goes with its split, or when the split's parts are replaced. psql's
-- DELETE of a part alone is refused by the sum check instead.
CREATE FUNCTION refuse_deleting_part(ledger bigint, part bigint, parent bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transaction % is a part of split % (ledger %)', part, parent, ledger
        USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'transactions_parts_go_with_parent',
              HINT = 'delete the split, or replace its parts';
END;
$$;

COMMENT ON FUNCTION refuse_deleting_part(bigint, bigint, bigint) IS
    'Raises the error of deleting a part on its own; the API''s DELETE calls it for parts.';

-- A part is dated, titled and paid like its split: a statement that edits a part's date, title or payee
-- itself is refused; the split's trigger below (one trigger level down) is what changes them.
CREATE FUNCTION refuse_part_drift() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'transaction % is a part of split %: its date, title and payee are the split''s', OLD.id, OLD.parent_id
        USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_parts_follow_their_split',
              COLUMN = CASE WHEN OLD.date IS DISTINCT FROM NEW.date THEN 'date'
                            WHEN OLD.title IS DISTINCT FROM NEW.title THEN 'title' ELSE 'payee' END,
              HINT = 'edit the split instead';
END;
$$;

CREATE TRIGGER transactions_parts_follow_their_split BEFORE UPDATE OF date, title, payee ON transactions
    FOR EACH ROW
    WHEN (NEW.parent_id IS NOT NULL AND pg_trigger_depth() = 0
          AND (OLD.date IS DISTINCT FROM NEW.date OR OLD.title IS DISTINCT FROM NEW.title OR OLD.payee IS DISTINCT FROM NEW.payee))
    EXECUTE FUNCTION refuse_part_drift();

COMMENT ON FUNCTION refuse_part_drift() IS 'Refuses editing a part''s date, title or payee apart from its split''s.';
COMMENT ON TRIGGER transactions_parts_follow_their_split ON transactions IS
    'A part''s date, title and payee are its split''s: edited through the split only.';

-- Editing the split's date, title or payee edits its parts.
CREATE FUNCTION mirror_split() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE transactions
    SET date = NEW.date, title = NEW.title, payee = NEW.payee, version = version + 1, updated_at = now()
    WHERE ledger_id = NEW.ledger_id AND parent_id = NEW.id
      AND (date IS DISTINCT FROM NEW.date OR title IS DISTINCT FROM NEW.title OR payee IS DISTINCT FROM NEW.payee);
    RETURN NULL;
END;
$$;

CREATE TRIGGER transactions_mirror_split AFTER UPDATE OF date, title, payee ON transactions
    FOR EACH ROW
    WHEN (NEW.split AND (OLD.date IS DISTINCT FROM NEW.date OR OLD.title IS DISTINCT FROM NEW.title
                         OR OLD.payee IS DISTINCT FROM NEW.payee))
    EXECUTE FUNCTION mirror_split();

COMMENT ON FUNCTION mirror_split() IS 'Gives a split''s parts its date, title and payee.';
COMMENT ON TRIGGER transactions_mirror_split ON transactions IS 'Keeps a split''s parts on its date, under its title and payee.';

-- ---------------------------------------------------------------------------------------------------------
-- The change feed: a split and its parts travel together
-- ---------------------------------------------------------------------------------------------------------

-- A change's family is the split it belongs to (the split's id, for the split and for each of its parts):
-- GET /changes does not end a page between changes of one family (docs/change-feed.md), so a client never
-- holds parts without their split.
ALTER TABLE change_pending ADD COLUMN family bigint;
ALTER TABLE change_log     ADD COLUMN family bigint;

COMMENT ON COLUMN change_pending.family IS 'For a split or one of its parts, the split''s id; NULL for every other record.';
COMMENT ON COLUMN change_log.family IS 'For a split or one of its parts, the split''s id: a page of the feed keeps a family together.';

CREATE FUNCTION capture_transaction_inserts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    broken record;
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version, family)
    SELECT n.ledger_id, TG_TABLE_NAME, n.id::text, to_json(n.id), 'upsert', n.version,
           CASE WHEN n.split THEN n.id ELSE n.parent_id END
    FROM inserted n
    WHERE n.id <= coalesce(pg_sequence_last_value('transactions_id_seq'), 0) OR move_id_sequence_past('transactions_id_seq', n.id);
    -- The split check of the inserted rows (check_split_adds_up's rule), once for the statement: every split
    -- it wrote or added parts to adds up and has two parts or more, and no part hangs on a transaction that
    -- is not split.
    IF EXISTS (SELECT 1 FROM inserted n WHERE n.split OR n.parent_id IS NOT NULL) THEN
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

CREATE FUNCTION capture_transaction_updates() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
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

CREATE FUNCTION capture_transaction_deletes() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_pending (ledger_id, collection, record_key, record_id, op, version, family)
    SELECT o.ledger_id, TG_TABLE_NAME, o.id::text, to_json(o.id), 'delete', o.version,
           CASE WHEN o.split THEN o.id ELSE o.parent_id END
    FROM deleted o;
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION capture_transaction_inserts() IS
    'capture_typed_inserts for transactions, with each change''s family (a split); also checks the splits the statement wrote.';
COMMENT ON FUNCTION capture_transaction_updates() IS 'capture_typed_updates for transactions, with each change''s family (a split).';
COMMENT ON FUNCTION capture_transaction_deletes() IS 'capture_typed_deletes for transactions, with each change''s family (a split).';

DROP TRIGGER transactions_capture_inserts ON transactions;
DROP TRIGGER transactions_capture_updates ON transactions;
DROP TRIGGER transactions_capture_deletes ON transactions;
CREATE TRIGGER transactions_capture_inserts AFTER INSERT ON transactions REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_transaction_inserts();
CREATE TRIGGER transactions_capture_updates AFTER UPDATE ON transactions REFERENCING OLD TABLE AS replaced NEW TABLE AS updated
    FOR EACH STATEMENT EXECUTE FUNCTION capture_transaction_updates();
CREATE TRIGGER transactions_capture_deletes AFTER DELETE ON transactions REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_transaction_deletes();

COMMENT ON TRIGGER transactions_capture_inserts ON transactions IS 'Feeds every transaction insert into the change feed (change_pending).';
COMMENT ON TRIGGER transactions_capture_updates ON transactions IS 'Feeds every transaction update into the change feed (change_pending).';
COMMENT ON TRIGGER transactions_capture_deletes ON transactions IS 'Feeds every transaction delete, cascaded ones included, into the change feed (change_pending).';

-- The sequencer run of migrations/0017, carrying each change's family into the log.
CREATE OR REPLACE FUNCTION stamp_change_feed(batch_limit integer, OUT stamped integer, OUT touched text)
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
               latest.changed_at, latest.family,
               s.last_seq + row_number() OVER (PARTITION BY latest.ledger_id ORDER BY latest.position) AS seq
        FROM latest JOIN change_feed_state s ON s.ledger_id = latest.ledger_id),
    written AS (
        INSERT INTO change_log AS l (ledger_id, collection, record_key, record_id, op, version, seq, changed_at, family)
        SELECT ledger_id, collection, record_key, record_id, op, version, seq, changed_at, family FROM numbered
        ON CONFLICT (ledger_id, collection, record_key) DO UPDATE
            SET record_id = excluded.record_id, op = excluded.op, version = excluded.version,
                seq = excluded.seq, changed_at = excluded.changed_at, family = excluded.family
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

-- ---------------------------------------------------------------------------------------------------------
-- schedules
-- ---------------------------------------------------------------------------------------------------------

CREATE DOMAIN schedule_frequency AS text
    CONSTRAINT schedule_frequency_known CHECK (VALUE IN (
        'once', 'daily', 'weekly', 'everyOtherWeek', 'twiceAMonth', 'every4Weeks', 'monthly', 'everyOtherMonth',
        'every3Months', 'every4Months', 'twiceAYear', 'yearly', 'everyOtherYear'));

COMMENT ON DOMAIN schedule_frequency IS
    'How often a schedule comes: once, daily, weekly, everyOtherWeek, twiceAMonth (the 15th and the last day), every4Weeks, '
    'monthly, everyOtherMonth, every3Months, every4Months, twiceAYear, yearly or everyOtherYear (docs/splits-and-schedules.md).';

-- A schedule's parts as JSON, [{"categoryId": 1, "amount": 12.50, "note": "..."}]: two to a hundred, adding up
-- to its amount. Kept as one value: a schedule's parts are copied into each split it posts, never queried alone.
CREATE FUNCTION schedule_splits_add_up(parts jsonb, total numeric) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(parts) <> 'array' THEN false
                ELSE jsonb_array_length(parts) BETWEEN 2 AND 100
                     AND (SELECT sum((p ->> 'amount')::numeric) FROM jsonb_array_elements(parts) p) = total
           END;
$$;

COMMENT ON FUNCTION schedule_splits_add_up(jsonb, numeric) IS 'Whether a schedule''s parts are 2-100 and add up to its amount.';

-- The occurrences of a schedule after `after` (every one when NULL) up to `through`, within first_date and
-- end_date, in order. Each is computed from first_date, not from the one before: a monthly schedule on the
-- 31st falls on the last day of shorter months and on the 31st again after them, a yearly one on February 29
-- on February 28 in common years (PostgreSQL's date + interval clamps to the month's last day). The client
-- library computes the same dates (BudgetSync), held equal to these by its tests.
CREATE FUNCTION schedule_occurrences(frequency text, first_date date, end_date date, after date, through date)
RETURNS SETOF date
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
-- A handful of dates per call, not the thousand PostgreSQL assumes of a set-returning function: with that
-- estimate the poster's and the months' statements looked expensive enough to be JIT-compiled on every run.
ROWS 8
AS $$
DECLARE
    lo date := greatest(coalesce(after + 1, first_date), first_date);
    hi date := least(through, coalesce(end_date, through));
    step_days integer := CASE frequency WHEN 'daily' THEN 1 WHEN 'weekly' THEN 7 WHEN 'everyOtherWeek' THEN 14
                                        WHEN 'every4Weeks' THEN 28 END;
    step_months integer := CASE frequency WHEN 'monthly' THEN 1 WHEN 'everyOtherMonth' THEN 2 WHEN 'every3Months' THEN 3
                                          WHEN 'every4Months' THEN 4 WHEN 'twiceAYear' THEN 6 WHEN 'yearly' THEN 12
                                          WHEN 'everyOtherYear' THEN 24 END;
    -- Whole months from first_date's month to lo's and to hi's.
    months_to_lo integer;
    months_to_hi integer;
BEGIN
    IF hi IS NULL OR hi < lo THEN
        RETURN;
    END IF;
    IF frequency = 'once' THEN
        IF first_date = lo THEN
            RETURN NEXT first_date;
        END IF;
        RETURN;
    END IF;
    IF step_days IS NOT NULL THEN
        RETURN QUERY
            SELECT first_date + n * step_days
            FROM generate_series((lo - first_date + step_days - 1) / step_days, (hi - first_date) / step_days) n;
        RETURN;
    END IF;
    months_to_lo := (extract(year FROM lo)::integer - extract(year FROM first_date)::integer) * 12
                    + extract(month FROM lo)::integer - extract(month FROM first_date)::integer;
    months_to_hi := (extract(year FROM hi)::integer - extract(year FROM first_date)::integer) * 12
                    + extract(month FROM hi)::integer - extract(month FROM first_date)::integer;
    IF step_months IS NOT NULL THEN
        RETURN QUERY
            SELECT o.day
            FROM generate_series(months_to_lo / step_months, months_to_hi / step_months) n
            CROSS JOIN LATERAL (SELECT (first_date + make_interval(months => n * step_months))::date AS day) o
            WHERE o.day BETWEEN lo AND hi
            ORDER BY o.day;
        RETURN;
    END IF;
    IF frequency = 'twiceAMonth' THEN
        RETURN QUERY
            SELECT o.day
            FROM generate_series(months_to_lo, months_to_hi) n
            CROSS JOIN LATERAL (SELECT (date_trunc('month', first_date) + make_interval(months => n))::date AS first_day) m
            CROSS JOIN LATERAL (VALUES (m.first_day + 14), ((m.first_day + interval '1 month')::date - 1)) o(day)
            WHERE o.day BETWEEN lo AND hi
            ORDER BY o.day;
        RETURN;
    END IF;
    RAISE EXCEPTION 'unknown schedule frequency %', frequency USING ERRCODE = 'check_violation';
END;
$$;

COMMENT ON FUNCTION schedule_occurrences(text, date, date, date, date) IS
    'A schedule''s occurrences after a day (all when NULL) up to another, in order (docs/splits-and-schedules.md).';

-- The first occurrence after `after`: no step is longer than two years, and none falls more than a few days
-- past first_date + 24 months when clamped, so 800 days ahead always holds it.
CREATE FUNCTION schedule_next_date(frequency text, first_date date, end_date date, after date) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT min(d)
    FROM schedule_occurrences(frequency, first_date, end_date, after,
                              greatest(coalesce(after, first_date), first_date) + 800) d;
$$;

COMMENT ON FUNCTION schedule_next_date(text, date, date, date) IS
    'A schedule''s first occurrence after a day (its first one when NULL); NULL when none is left before its end date.';

CREATE TABLE schedules (
    ledger_id       bigint             NOT NULL DEFAULT sole_ledger(),
    id              bigint             GENERATED BY DEFAULT AS IDENTITY,
    title           transaction_title  NOT NULL,
    amount          numeric(14,2)      NOT NULL,
    account_id      bigint,
    category_id     bigint,
    splits          jsonb,
    payee           payee_name,
    note            transaction_note,
    frequency       schedule_frequency NOT NULL,
    first_date      date               NOT NULL,
    end_date        date,
    auto_post       boolean            NOT NULL DEFAULT false,
    posted_through  date,
    next_date       date,
    created_at      timestamptz        NOT NULL DEFAULT now(),
    updated_at      timestamptz        NOT NULL DEFAULT now(),
    version         record_version     NOT NULL DEFAULT 1,
    CONSTRAINT schedules_pkey PRIMARY KEY (ledger_id, id),
    CONSTRAINT schedules_ledger_id_fkey FOREIGN KEY (ledger_id) REFERENCES ledgers (id) ON DELETE CASCADE,
    -- An account with schedules is not deleted (like one with transactions); a category's schedules go with
    -- it, as its transactions do.
    CONSTRAINT schedules_account_id_fkey FOREIGN KEY (ledger_id, account_id) REFERENCES accounts (ledger_id, id),
    CONSTRAINT schedules_category_id_fkey FOREIGN KEY (ledger_id, category_id)
        REFERENCES categories (ledger_id, id) ON DELETE CASCADE,
    CONSTRAINT schedules_end_after_first CHECK (end_date IS NULL OR end_date >= first_date),
    CONSTRAINT schedules_account_or_category CHECK (account_id IS NOT NULL OR category_id IS NOT NULL OR splits IS NOT NULL),
    CONSTRAINT schedules_category_or_splits CHECK (category_id IS NULL OR splits IS NULL),
    CONSTRAINT schedules_splits_add_up CHECK (splits IS NULL OR schedule_splits_add_up(splits, amount))
);

COMMENT ON TABLE schedules IS
    'Transactions that come again (docs/splits-and-schedules.md): each occurrence of an autoPost schedule becomes a transaction once.';
COMMENT ON COLUMN schedules.ledger_id IS 'The ledger (household budget) the schedule belongs to.';
COMMENT ON COLUMN schedules.id IS 'Record id within the ledger; server-assigned from the identity sequence, or chosen by the client.';
COMMENT ON COLUMN schedules.title IS 'The title each posted transaction gets.';
COMMENT ON COLUMN schedules.amount IS 'Each occurrence''s amount, in the transactions'' sense: positive is money out.';
COMMENT ON COLUMN schedules.account_id IS 'The account each occurrence moves money in, if any.';
COMMENT ON COLUMN schedules.category_id IS 'The category each occurrence is booked against, unless it is split.';
COMMENT ON COLUMN schedules.splits IS 'For a split schedule, its parts: [{categoryId, amount, note}], adding up to amount.';
COMMENT ON COLUMN schedules.payee IS 'Who is paid or who pays.';
COMMENT ON COLUMN schedules.note IS 'Free text, at most 2000 characters, copied to each posted transaction.';
COMMENT ON COLUMN schedules.frequency IS 'How often it comes (schedule_frequency).';
COMMENT ON COLUMN schedules.first_date IS 'The first occurrence; every later one is computed from it.';
COMMENT ON COLUMN schedules.end_date IS 'No occurrence falls after it; NULL: none ends.';
COMMENT ON COLUMN schedules.auto_post IS 'Whether each occurrence becomes a transaction on its day (the poster, post_due_schedules).';
COMMENT ON COLUMN schedules.posted_through IS
    'The last occurrence the poster handled: posted when auto_post, let pass when not. Later ones are upcoming.';
COMMENT ON COLUMN schedules.next_date IS 'The first occurrence after posted_through (schedule_next_date), kept by a trigger; NULL when none is left.';
COMMENT ON COLUMN schedules.created_at IS 'When the record was first written.';
COMMENT ON COLUMN schedules.updated_at IS 'When the record was last written.';
COMMENT ON COLUMN schedules.version IS 'Number of writes this record has had, starting at 1.';
COMMENT ON CONSTRAINT schedules_end_after_first ON schedules IS 'A schedule ends on or after its first occurrence.';
COMMENT ON CONSTRAINT schedules_account_or_category ON schedules IS 'What a schedule posts counts somewhere: an account, a category or parts.';
COMMENT ON CONSTRAINT schedules_category_or_splits ON schedules IS 'A split schedule''s categories are its parts''.';
COMMENT ON CONSTRAINT schedules_splits_add_up ON schedules IS 'A split schedule has 2-100 parts adding up to its amount.';

-- The poster looks for what is due by next_date, across ledgers.
CREATE INDEX schedules_next_date_idx ON schedules (next_date) WHERE next_date IS NOT NULL;
-- Deleting an account or category checks the schedules naming it.
CREATE INDEX schedules_account_id_idx ON schedules (ledger_id, account_id) WHERE account_id IS NOT NULL;
CREATE INDEX schedules_category_id_idx ON schedules (ledger_id, category_id) WHERE category_id IS NOT NULL;

COMMENT ON INDEX schedules_next_date_idx IS 'The schedules by their next occurrence: what the poster finds due.';
COMMENT ON INDEX schedules_account_id_idx IS 'The schedules naming an account.';
COMMENT ON INDEX schedules_category_id_idx IS 'The schedules naming a category.';

CREATE FUNCTION keep_schedule_next_date() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.next_date := schedule_next_date(NEW.frequency, NEW.first_date, NEW.end_date, NEW.posted_through);
    RETURN NEW;
END;
$$;

CREATE TRIGGER schedules_keep_next_date BEFORE INSERT OR UPDATE ON schedules
    FOR EACH ROW EXECUTE FUNCTION keep_schedule_next_date();

COMMENT ON FUNCTION keep_schedule_next_date() IS 'Sets a schedule''s next_date from its frequency, dates and posted_through.';
COMMENT ON TRIGGER schedules_keep_next_date ON schedules IS 'next_date is derived: every write of a schedule recomputes it.';

CREATE TRIGGER schedules_capture_inserts AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_inserts('schedules_id_seq');
CREATE TRIGGER schedules_capture_updates AFTER UPDATE ON schedules REFERENCING OLD TABLE AS replaced NEW TABLE AS updated
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_updates('schedules_id_seq');
CREATE TRIGGER schedules_capture_deletes AFTER DELETE ON schedules REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION capture_typed_deletes();
CREATE TRIGGER schedules_capture_truncate BEFORE TRUNCATE ON schedules
    FOR EACH STATEMENT EXECUTE FUNCTION capture_truncate();

COMMENT ON TRIGGER schedules_capture_inserts ON schedules IS 'Feeds every schedule insert into the change feed (change_pending).';
COMMENT ON TRIGGER schedules_capture_updates ON schedules IS 'Feeds every schedule update into the change feed (change_pending).';
COMMENT ON TRIGGER schedules_capture_deletes ON schedules IS 'Feeds every schedule delete into the change feed (change_pending).';
COMMENT ON TRIGGER schedules_capture_truncate ON schedules IS 'Notes every schedule as deleted before a TRUNCATE.';

-- A part's categoryId is a key into categories that a foreign key cannot hold (it sits inside jsonb): checked
-- when the parts are written, naming the first bad part as the API names it (splits[0].categoryId). A category
-- deleted later takes the schedule's parts with it no further: the poster leaves such a schedule due until it
-- is edited (post_due_schedules).
CREATE FUNCTION check_schedule_part_categories() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    missing bigint;
BEGIN
    SELECT e.n - 1 INTO missing
    FROM jsonb_array_elements(NEW.splits) WITH ORDINALITY e(part, n)
    WHERE NOT EXISTS (SELECT 1 FROM categories c
                      WHERE c.ledger_id = NEW.ledger_id AND c.id = (e.part ->> 'categoryId')::bigint)
    ORDER BY e.n
    LIMIT 1;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'schedule %: part % names no category of its ledger', NEW.id, missing
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'schedules_part_category_id_fkey',
                  COLUMN = 'splits[' || missing || '].categoryId';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER schedules_part_category_id_fkey BEFORE INSERT OR UPDATE OF splits ON schedules
    FOR EACH ROW WHEN (NEW.splits IS NOT NULL)
    EXECUTE FUNCTION check_schedule_part_categories();

COMMENT ON FUNCTION check_schedule_part_categories() IS 'Refuses a schedule part whose categoryId is no category of the ledger.';
COMMENT ON TRIGGER schedules_part_category_id_fkey ON schedules IS
    'Each part of a split schedule names a category of its ledger when written, as a foreign key would.';

-- An account that schedules name is not deleted: the schedules' foreign key would refuse it too, but under
-- the same constraint name a schedule naming no such account is refused with, so this says which it is.
CREATE FUNCTION refuse_deleting_scheduled_account() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM schedules WHERE ledger_id = OLD.ledger_id AND account_id = OLD.id) THEN
        RAISE EXCEPTION 'account % has schedules: delete them or move them to another account first', OLD.id
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'accounts_keep_their_schedules';
    END IF;
    RETURN OLD;
END;
$$;

CREATE TRIGGER accounts_keep_their_schedules BEFORE DELETE ON accounts
    FOR EACH ROW WHEN (pg_trigger_depth() = 0)
    EXECUTE FUNCTION refuse_deleting_scheduled_account();

COMMENT ON FUNCTION refuse_deleting_scheduled_account() IS 'Refuses deleting an account that schedules still name.';
COMMENT ON TRIGGER accounts_keep_their_schedules ON accounts IS
    'An account with schedules keeps them: they are deleted or moved first.';

-- The poster (docs/splits-and-schedules.md): every due occurrence of an autoPost schedule, up to `today` in
-- the server's time zone, becomes a transaction with import id schedule:<id>:<YYYY-MM-DD>; a schedule that
-- is not autoPost only lets the occurrences before today pass. Every server process runs it at start and
-- every minute: a schedule is locked while it is posted (SKIP LOCKED: another process takes the next one),
-- posted_through moves past what was posted in the same statement, and the import id's unique index makes
-- a second posting of one occurrence do nothing even so. A split schedule whose parts name a category that
-- is gone is left due, and stays upcoming, until it is edited. Answers how many transactions it wrote.
CREATE FUNCTION post_due_schedules(today date) RETURNS integer
LANGUAGE plpgsql
-- The server's sessions run without JIT (docs/operations.md); a psql or cron caller's need not.
SET jit = off
AS $$
DECLARE
    written integer;
BEGIN
    WITH due AS (
        SELECT s.ledger_id, s.id, s.title, s.amount, s.account_id, s.category_id, s.splits, s.payee, s.note,
               s.frequency, s.first_date, s.end_date, s.auto_post, s.posted_through,
               CASE WHEN s.auto_post THEN today ELSE today - 1 END AS through
        FROM schedules s
        WHERE s.next_date <= CASE WHEN s.auto_post THEN today ELSE today - 1 END
          AND (s.splits IS NULL OR NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements(s.splits) p
                WHERE NOT EXISTS (SELECT 1 FROM categories c
                                  WHERE c.ledger_id = s.ledger_id AND c.id = (p ->> 'categoryId')::bigint)))
        FOR UPDATE OF s SKIP LOCKED),
    occurrences AS (
        SELECT due.*, d.day, 'schedule:' || due.id || ':' || to_char(d.day, 'YYYY-MM-DD') AS import_id
        FROM due CROSS JOIN LATERAL schedule_occurrences(due.frequency, due.first_date, due.end_date, due.posted_through, due.through) d(day)
        WHERE due.auto_post),
    posted AS (
        INSERT INTO transactions (ledger_id, id, category_id, title, amount, date, note, import_id, account_id, payee, split)
        SELECT o.ledger_id, nextval('transactions_id_seq'), o.category_id, o.title, o.amount, o.day, o.note, o.import_id,
               o.account_id, o.payee, o.splits IS NOT NULL
        FROM occurrences o
        ORDER BY o.day, o.ledger_id, o.id
        ON CONFLICT (ledger_id, account_id, import_id) WHERE import_id IS NOT NULL DO NOTHING
        RETURNING ledger_id, id, import_id, title, date, payee, split),
    parts AS (
        INSERT INTO transactions (ledger_id, id, parent_id, category_id, title, amount, date, note, payee)
        SELECT p.ledger_id, nextval('transactions_id_seq'), p.id, (e.part ->> 'categoryId')::bigint, p.title,
               (e.part ->> 'amount')::numeric, p.date, e.part ->> 'note', p.payee
        FROM posted p
        JOIN occurrences o ON o.ledger_id = p.ledger_id AND o.import_id = p.import_id
        CROSS JOIN LATERAL jsonb_array_elements(o.splits) WITH ORDINALITY e(part, n)
        WHERE p.split
        ORDER BY p.id, e.n
        RETURNING 1),
    advanced AS (
        UPDATE schedules s
        SET posted_through = coalesce(
                (SELECT max(d) FROM schedule_occurrences(due.frequency, due.first_date, due.end_date, due.posted_through, due.through) d),
                s.posted_through),
            version = s.version + 1, updated_at = now()
        FROM due
        WHERE s.ledger_id = due.ledger_id AND s.id = due.id
        RETURNING 1)
    -- Every data-modifying part runs whether or not the SELECT reads it.
    SELECT count(*) INTO written FROM posted;
    RETURN written;
END;
$$;

COMMENT ON FUNCTION post_due_schedules(date) IS
    'The poster: turns every due occurrence of autoPost schedules into a transaction, once; answers how many it wrote.';
