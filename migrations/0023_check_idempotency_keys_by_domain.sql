-- An idempotency key's two value checks become domains (docs/sync.md, "How a push is written").
--
-- Every keyed write stores its answer with one INSERT into idempotency_keys. PostgreSQL reads a table CHECK
-- constraint's expression back from its stored text for every statement that writes the table, while a
-- domain's constraints are read once per session and kept: the two checks, parsed afresh on every store,
-- cost that INSERT about 69k of its 236k instructions (one backend under callgrind, bench/README.md
-- "bench/push"). As domains they hold the same values, raise the same check_violation (under the domain's
-- constraint name), and cost a few thousand. The keys, rows and indexes are unchanged: each column keeps its
-- base type, so nothing is rewritten; PostgreSQL checks the existing rows against the domains once.

CREATE DOMAIN idempotency_key AS text
    CONSTRAINT idempotency_key_length CHECK (char_length(VALUE) BETWEEN 1 AND 255);

CREATE DOMAIN idempotency_answer_status AS smallint
    CONSTRAINT idempotency_answer_status_success CHECK (VALUE BETWEEN 200 AND 299);

COMMENT ON DOMAIN idempotency_key IS 'A client''s Idempotency-Key, unquoted: 1-255 characters.';
COMMENT ON DOMAIN idempotency_answer_status IS 'The HTTP status of a stored idempotent answer: only successes (2xx) are stored.';

ALTER TABLE idempotency_keys
    DROP CONSTRAINT idempotency_keys_key_length,
    DROP CONSTRAINT idempotency_keys_status_success,
    ALTER COLUMN key TYPE idempotency_key,
    ALTER COLUMN status TYPE idempotency_answer_status;
