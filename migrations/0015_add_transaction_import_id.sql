-- A transaction's import id (docs/import.md): the permanent key of a row that came from a bank statement,
-- given by the file or derived from its date, amount and occurrence, so that importing overlapping
-- statements creates each row once. Retrying one request is what Idempotency-Key covers; this key outlives it.

-- A domain, as the other bounded texts (migrations/0013): its check is parsed once per session.
CREATE DOMAIN transaction_import_id AS text
    CONSTRAINT transaction_import_id_length CHECK (char_length(VALUE) BETWEEN 1 AND 100);

COMMENT ON DOMAIN transaction_import_id IS 'A transaction''s import id: 1-100 characters.';

ALTER TABLE transactions ADD COLUMN import_id transaction_import_id;

-- Partial: most transactions have no import id, and a row the predicate leaves out costs its insert no
-- index entry, so a write without one costs PostgreSQL what it did before (bench/README.md, The write path).
-- The import's INSERT … ON CONFLICT names this index by its column and predicate.
CREATE UNIQUE INDEX transactions_import_id_unique ON transactions (import_id) WHERE import_id IS NOT NULL;

COMMENT ON COLUMN transactions.import_id IS
    'The row''s key in the bank statement it was imported from, unique when set; NULL for a transaction typed in. Deleting the transaction frees it (docs/import.md).';
COMMENT ON INDEX transactions_import_id_unique IS
    'Each import id names one transaction: a statement imported again, or one that overlaps it, skips the rows already here.';
