-- Clients may choose their own ids (offline creation, PUT on a missing id). Server-assigned ids come
-- from the identity sequence, so whenever a client takes an id beyond the sequence, the sequence is
-- moved past it: a later server-assigned id can never collide with an id a client chose.
CREATE FUNCTION keep_id_sequence_ahead() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    sequence_name text := pg_get_serial_sequence(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME, 'id');
    last_assigned bigint;
BEGIN
    EXECUTE format('SELECT last_value FROM %s', sequence_name) INTO last_assigned;
    IF NEW.id > last_assigned THEN
        -- setval is not transactional: serialize the clients that move one table's sequence so that
        -- it only ever moves forward.
        PERFORM pg_advisory_xact_lock(TG_RELID::integer, 1);
        EXECUTE format('SELECT last_value FROM %s', sequence_name) INTO last_assigned;
        IF NEW.id > last_assigned THEN
            PERFORM setval(sequence_name, NEW.id);
        END IF;
    END IF;
    RETURN NEW;
END;
$$;

COMMENT ON FUNCTION keep_id_sequence_ahead() IS
    'Moves a table''s id sequence past an id a client chose, so server-assigned ids never collide with it.';

CREATE TRIGGER categories_keep_id_sequence_ahead
    BEFORE INSERT ON categories
    FOR EACH ROW EXECUTE FUNCTION keep_id_sequence_ahead();

CREATE TRIGGER transactions_keep_id_sequence_ahead
    BEFORE INSERT ON transactions
    FOR EACH ROW EXECUTE FUNCTION keep_id_sequence_ahead();
