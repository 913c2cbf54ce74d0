-- POST /categories/:id/transactions: TransactionQueries.insert, one statement without BEGIN/COMMIT, as the
-- server runs it (the change log's triggers fire as they do for the server). The server binds id, date and
-- note, import_id, account_id and payee as NULL parameters; pgbench cannot bind NULL, so they are NULL literals here.
-- Generated from the routes' own queries: BenchSQLTests fails when this file and the route differ.
\set id random(1, 200)
INSERT INTO transactions AS t (ledger_id, id, category_id, title, amount, date, note, import_id, account_id, cleared, payee) VALUES ('1', coalesce(NULL::bigint, nextval('transactions_id_seq')), :id::bigint, 'bench', '12.50', coalesce(NULL::date, (now() AT TIME ZONE 'UTC')::date), NULL::text, NULL::text, NULL::bigint, coalesce(NULL::text, 'uncleared'), NULL::text) RETURNING t.id, true, t.id, t.category_id, t.title, t.amount, t.date, t.note, t.import_id, t.account_id, t.cleared, t.payee, t.transfer_id, t.parent_id, NULL::json, t.created_at, t.updated_at, t.version;
