-- POST /categories/:id/transactions: TransactionQueries.insert, one statement without BEGIN/COMMIT, as the
-- server runs it (the change log's triggers fire as they do for the server). The server binds id, date and
-- note as NULL parameters; pgbench cannot bind NULL, so they are NULL literals here.
-- Generated from the routes' own queries: BenchSQLTests fails when this file and the route differ.
-- The timestamp format is written U&'…\003A…' (the same constant) because pgbench would take the colons of
-- 'HH24:MI:SS' for variables :MI and :SS.
\set id random(1, 200)
WITH t AS ( INSERT INTO transactions (id, category_id, title, amount, date, note) VALUES (coalesce(NULL::bigint, nextval('transactions_id_seq')), :id, 'bench', '12.50', coalesce(NULL::date, (now() AT TIME ZONE 'UTC')::date), NULL::text) RETURNING *) SELECT t.id, true, (SELECT row_to_json(r) FROM (SELECT t.id, t.category_id AS "categoryId", t.title, t.amount, t.date, t.note, to_char(t.created_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "createdAt", to_char(t.updated_at AT TIME ZONE 'UTC', U&'YYYY-MM-DD"T"HH24\003AMI\003ASS.MS"Z"') AS "updatedAt", t.version) r) FROM t;
