-- An idempotency key's claim that fails its statement when the key is taken (docs/sync.md, "Idempotency
-- keys").
--
-- A keyed write sends its claim ahead of the write, in one round trip with the write itself (libpq pipeline
-- mode). The server runs a pipeline's statements in order and skips every one after a statement that
-- failed, so a claim that fails when the key is busy or already answered keeps the write from running at
-- all: a duplicate still gets its 409 at once, queued behind nothing, and a retry writes nothing before its
-- replay. The claim's statement (the API's IdempotencyQueries.claimOrRefuse) finds the key's state; this
-- function turns it into the error.
CREATE FUNCTION refuse_taken_idempotency_key(locked boolean, answered boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT locked THEN
        RAISE EXCEPTION 'the idempotency key is held by a request still running' USING ERRCODE = 'IK409';
    ELSIF answered THEN
        RAISE EXCEPTION 'the idempotency key already has a stored answer' USING ERRCODE = 'IK200';
    END IF;
END;
$$;

COMMENT ON FUNCTION refuse_taken_idempotency_key(boolean, boolean) IS
    'Raises IK409 when an idempotency key''s lock is held elsewhere and IK200 when the key has a live stored answer; a keyed write''s claim calls it so that the write sent with it never runs (docs/sync.md).';
