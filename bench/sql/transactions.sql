-- GET /categories/:id/transactions: ListPlan.selectRows for a plain list, with the category's existence
-- answered by the same statement (one round trip), as the server prepares it; LIMIT 1001 is the probe that
-- tells a list read whole from one streamed through a cursor (ListAnswer.probeRows).
-- Generated from the routes' own queries: BenchSQLTests fails when this file and the route differ.
\set id random(1, 200)
WITH matched AS MATERIALIZED (SELECT total, (SELECT last_seq FROM change_feed_state WHERE ledger_id = '1') AS position, EXISTS (SELECT 1 FROM categories c WHERE c.ledger_id = '1' AND c.id = :id) AS owner_exists FROM (SELECT 0::bigint AS total) counted) SELECT matched.total, matched.position, matched.owner_exists, page.* FROM matched LEFT JOIN LATERAL (SELECT t.id, t.category_id, t.title, t.amount, t.date, t.note, t.import_id, t.account_id, t.cleared, t.payee, t.transfer_id, t.created_at, t.updated_at, t.version, t.id AS sort_last FROM transactions t WHERE (t.ledger_id = '1' AND (t.category_id = :id)) AND TRUE ORDER BY sort_last LIMIT '1001'::bigint OFFSET '0'::bigint) page ON true ORDER BY page.sort_last;
