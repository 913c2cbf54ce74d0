-- GET /categories/:id/transactions: TransactionQueries.list(categoryID:), as the server prepares it.
-- The timestamp format is written U&'…\003A…' (the same constant) because pgbench would take the colons of
-- 'HH24:MI:SS' for variables :MI and :SS.
\set id random(1, 200)
SELECT (SELECT coalesce('[' || string_agg(((SELECT row_to_json(r) FROM (SELECT t.id, t.category_id AS "categoryId", t.title, t.amount, t.date, t.note, to_char(t.created_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "createdAt", to_char(t.updated_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "updatedAt", t.version) r))::text, ',' ORDER BY t.id) || ']', '[]')::json FROM transactions t WHERE t.category_id = c.id) FROM categories c WHERE c.id = :id;
