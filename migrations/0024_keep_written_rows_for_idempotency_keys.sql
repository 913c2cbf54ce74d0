-- A keyed create writes its record and its idempotency key in one statement (docs/sync.md, "How a push is
-- written").
--
-- Until now a keyed write stored the answer it gave, and that answer exists only once the write has returned:
-- the key's row went in a second statement, sent with the COMMIT, so a keyed POST took two round trips where
-- the same POST without a key takes one. A create's answer is its new row rendered by the route, so the key's
-- row can keep the row instead, written by the create's own statement (`WITH w AS (INSERT … RETURNING …)
-- INSERT INTO idempotency_keys … SELECT … FROM w`): one round trip, no BEGIN or COMMIT of its own. A retry
-- renders the kept row again, with the headers the route gives it.
--
-- Rows stored as before keep their answer in status, headers and body and have no written_row. Adding a
-- column without a default rewrites nothing.

ALTER TABLE idempotency_keys ADD COLUMN written_row text[];

COMMENT ON COLUMN idempotency_keys.written_row IS
    'For a create written in one statement with its key: the columns its INSERT answered, as text, which the route renders again for a retry (status 201, headers and body then empty). NULL when headers and body hold the answer.';
COMMENT ON COLUMN idempotency_keys.body IS
    'Answer body, replayed byte for byte; empty when written_row holds the created record instead.';
COMMENT ON COLUMN idempotency_keys.headers IS
    'Answer headers replayed with it, as [[name, value], …] (Location, ETag, Content-Type); [] when written_row holds the created record instead.';
