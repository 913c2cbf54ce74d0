-- The accounts bench data (bench/accounts), on top of sql/load.sql's 200 categories x 50 transactions:
-- 20 accounts (16 on budget, 4 off), the 10,000 transactions spread over them (two in three cleared), and a
-- salary without a category into each on-budget account in each of the last 12 months (income).
BEGIN;
INSERT INTO accounts (id, name, type, on_budget, opening_balance, opened_on)
SELECT i, 'Account ' || i, CASE WHEN i <= 16 THEN 'checking' ELSE 'investment' END, i <= 16, (i * 100)::numeric(14,2), DATE '2024-01-01'
FROM generate_series(1, 20) AS i;
UPDATE transactions SET account_id = id % 20 + 1, cleared = CASE WHEN id % 3 = 0 THEN 'uncleared' ELSE 'cleared' END;
INSERT INTO transactions (account_id, title, amount, date, payee)
SELECT a, 'Salary', -2500.00, (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => m))::date + 24, 'Employer'
FROM generate_series(1, 16) AS a, generate_series(0, 11) AS m;
COMMIT;
VACUUM ANALYZE accounts;
VACUUM ANALYZE transactions;
