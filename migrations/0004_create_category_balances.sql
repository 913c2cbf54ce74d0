-- What psql users ask first: how much of each budget is left.
CREATE VIEW category_balances AS
SELECT c.id,
       c.title,
       c.amount,
       coalesce(s.spent, 0)::numeric(14,2)            AS spent,
       (c.amount - coalesce(s.spent, 0))::numeric(14,2) AS remaining
FROM categories c
LEFT JOIN (
    SELECT category_id, sum(amount) AS spent
    FROM transactions
    GROUP BY category_id
) s ON s.category_id = c.id;

COMMENT ON VIEW category_balances IS 'Each category with the sum of its transactions and what remains of its budget.';
COMMENT ON COLUMN category_balances.id IS 'The category id.';
COMMENT ON COLUMN category_balances.title IS 'The category title.';
COMMENT ON COLUMN category_balances.amount IS 'The budgeted amount.';
COMMENT ON COLUMN category_balances.spent IS 'Sum of the category''s transaction amounts.';
COMMENT ON COLUMN category_balances.remaining IS 'Budgeted amount minus what was spent.';
