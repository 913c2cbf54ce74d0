-- 200 categories × 50 transactions, loaded after the server has migrated the schema.
BEGIN;
INSERT INTO categories (id, title, amount)
SELECT i, 'Category ' || i, (1000 + i)::numeric(14,2) FROM generate_series(1, 200) AS i;
INSERT INTO transactions (category_id, title, amount, date, note)
SELECT c, 'Purchase ' || c || '-' || n, ((c * 7 + n * 13) % 10000) / 100.0, DATE '2024-01-01' + (n % 28),
       CASE WHEN n % 5 = 0 THEN 'note ' || n END
FROM generate_series(1, 200) AS c, generate_series(1, 50) AS n
ORDER BY c, n;
COMMIT;
VACUUM ANALYZE categories;
VACUUM ANALYZE transactions;
