-- bench/run's months step: the bench data (200 categories × 50 transactions, loaded by the peers harness)
-- spread over the 12 months up to the current one (UTC), a quarter of the categories rolling over, and a
-- month budget of their own for every fifth category in three of those months. Run once, after the
-- other steps, on our server's database.
BEGIN;
UPDATE transactions
SET date = (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => (id % 12)::integer))::date + (id / 12 % 28)::integer;
UPDATE categories SET rollover = (id % 4 = 0);
INSERT INTO budgets (ledger_id, category_id, month, amount)
SELECT c.ledger_id, c.id, (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => k))::date, c.amount + 100
FROM categories c, generate_series(0, 6, 3) AS k
WHERE c.id % 5 = 0
ON CONFLICT (ledger_id, category_id, month) DO NOTHING;
COMMIT;
VACUUM ANALYZE categories;
VACUUM ANALYZE transactions;
VACUUM ANALYZE budgets;
