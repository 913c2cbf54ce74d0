-- GET /categories/:id/transactions: ListPlan.selectPage for a plain list, with the category's existence
-- answered by the same statement (one round trip), as the server prepares it.
-- Generated from the routes' own queries: BenchSQLTests fails when this file and the route differ.
-- The timestamp format is written U&'…\003A…' (the same constant) because pgbench would take the colons of
-- 'HH24:MI:SS' for variables :MI and :SS.
\set id random(1, 200)
SELECT matched.total, (SELECT coalesce('[' || string_agg(page.element::text, ',' ORDER BY page.sort_last) || ']', '[]') FROM (SELECT (SELECT row_to_json(r) FROM (SELECT t.id, t.category_id AS "categoryId", t.title, t.amount, t.date, t.note, to_char(t.created_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "createdAt", to_char(t.updated_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "updatedAt", t.version) r) AS element, t.id AS sort_last FROM transactions t WHERE (t.category_id = :id) AND TRUE ORDER BY sort_last LIMIT ALL OFFSET '0'::bigint) page), change_feed_position(), EXISTS (SELECT 1 FROM categories WHERE id = :id) FROM (SELECT 0::bigint AS total) matched;
