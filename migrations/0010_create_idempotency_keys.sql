-- Idempotency keys (SPEC §5) and the feed position every GET reports as X-Sync-Seq.
--
-- A key's row is written in the same transaction as the write it protects, so after a crash either both
-- exist or neither does: an answered write is never applied twice, and an unanswered one can be retried.
-- The rows live in PostgreSQL rather than in a server's memory so that a retry reaching another server
-- process behind the load balancer still finds the first answer.
CREATE TABLE idempotency_keys (
    key          text        NOT NULL,
    fingerprint  bytea       NOT NULL,
    method       text        NOT NULL,
    path         text        NOT NULL,
    status       smallint    NOT NULL,
    headers      json        NOT NULL,
    body         text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (key),
    CONSTRAINT idempotency_keys_key_length CHECK (char_length(key) BETWEEN 1 AND 255),
    CONSTRAINT idempotency_keys_status_success CHECK (status BETWEEN 200 AND 299)
);

-- Expired keys are purged by age.
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);

COMMENT ON TABLE idempotency_keys IS 'The first successful answer to each Idempotency-Key, replayed to retries for 24 hours (SPEC §5).';
COMMENT ON COLUMN idempotency_keys.key IS 'The client''s Idempotency-Key (or a batch operation''s idempotencyKey), unquoted.';
COMMENT ON COLUMN idempotency_keys.fingerprint IS 'SHA-256 of method, path, media type and the body in compact form: a retry must match it.';
COMMENT ON COLUMN idempotency_keys.method IS 'HTTP method of the first request, for people reading the table.';
COMMENT ON COLUMN idempotency_keys.path IS 'Request target of the first request, for people reading the table.';
COMMENT ON COLUMN idempotency_keys.status IS 'HTTP status of the stored answer; only successes are stored.';
COMMENT ON COLUMN idempotency_keys.headers IS 'Answer headers replayed with it, as [[name, value], …] (Location, ETag, Content-Type).';
COMMENT ON COLUMN idempotency_keys.body IS 'Answer body, replayed byte for byte.';
COMMENT ON COLUMN idempotency_keys.created_at IS 'When the first request committed; the key expires 24 hours later.';

-- The largest seq any snapshot can see: the lastSeq a read reflects. Seqs are handed out in commit order
-- (migrations/0009), so everything at or below it is in the snapshot and everything above it is not.
-- Purged tombstones count too, so the position never moves backwards when the newest change was a purged delete.
CREATE FUNCTION change_feed_position() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT greatest((SELECT purged_seq FROM change_feed_state), (SELECT max(seq) FROM change_log), 0);
$$;

COMMENT ON FUNCTION change_feed_position() IS
    'The change feed position a statement''s snapshot reflects (X-Sync-Seq): follow GET /changes from it.';
