-- GET /categories/:id: RecordRoutes.find, i.e. CategoryQueries.find wrapped by Connection.snapshotJSON
-- (the record and X-Sync-Seq from one snapshot), one statement as the server prepares it.
-- Generated from the routes' own queries: BenchSQLTests fails when this file and the route differ.
-- The timestamp format is written U&'…\003A…' (the same constant) because pgbench would take the colons of
-- 'HH24:MI:SS' for variables :MI and :SS.
\set id random(1, 200)
SELECT snapshot.json, change_feed_position() FROM (SELECT (SELECT row_to_json(r) FROM (SELECT c.id, c.title, c.amount, b.spent, c.amount - b.spent AS remaining, to_char(c.created_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "createdAt", to_char(c.updated_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "updatedAt", c.version) r) FROM categories c CROSS JOIN LATERAL (SELECT coalesce(sum(t.amount), 0.00) AS spent FROM transactions t WHERE t.category_id = c.id) b WHERE c.id = :id) AS snapshot(json);
