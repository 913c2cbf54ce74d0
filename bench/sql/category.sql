-- GET /categories/:id: RecordRoutes.find, i.e. CategoryQueries.find with the feed position
-- (the plain columns and X-Sync-Seq from one snapshot), one statement as the server prepares it.
-- Generated from the routes' own queries: BenchSQLTests fails when this file and the route differ.
\set id random(1, 200)
SELECT (SELECT last_seq FROM change_feed_state WHERE ledger_id = '1'), snapshot.* FROM (SELECT c.id, c.title, c.amount, c.rollover, f.spent, f.remaining, c.created_at, c.updated_at, c.version FROM categories c CROSS JOIN LATERAL (SELECT s.spent, c.amount - s.spent AS remaining FROM (SELECT coalesce(sum(t.amount), 0.00) AS spent FROM transactions t WHERE t.ledger_id = c.ledger_id AND t.category_id = c.id) s) f WHERE c.ledger_id = '1' AND c.id = :id) AS snapshot;
