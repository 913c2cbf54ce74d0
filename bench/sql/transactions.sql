-- GET /categories/:id/transactions: ListPlan.selectPage for a plain list, one level, the change feed position
-- as an InitPlan; the category's existence is proven by any row (its foreign key) and checked by a second
-- statement (ListPlan.selectRows) only when the page is empty; a split has no category, so its parts' subquery
-- is NULL here (RecordOwner.nullMembers). The server asks for binary results, which
-- pgbench cannot: pgbench pays numeric_out and timestamptz_out, the server does not (bench/README.md, The
-- list). LIMIT 1001 is the probe that tells a list read whole from one streamed through a cursor
-- (ListAnswer.probeRows).
-- Generated from the routes' own queries: BenchSQLTests fails when this file and the route differ.
\set id random(1, 200)
SELECT (SELECT last_seq FROM change_feed_state WHERE ledger_id = '1'), t.id, t.category_id, t.title, t.amount, t.date, t.note, t.import_id, t.account_id, t.cleared, t.payee, t.transfer_id, t.parent_id, NULL, t.created_at, t.updated_at, t.version FROM transactions t WHERE (t.ledger_id = '1' AND (t.category_id = :id)) AND TRUE ORDER BY t.id LIMIT '1001'::bigint OFFSET '0'::bigint;
