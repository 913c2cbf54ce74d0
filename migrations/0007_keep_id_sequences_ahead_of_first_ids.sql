-- 0003's trigger compared a client's id only with the sequence's last value. A fresh sequence has
-- last_value 1 but has not handed it out yet (is_called is false), so a client taking id 1 first left
-- the sequence about to give out 1 again. Now an id the sequence would still hand out moves it too.
CREATE OR REPLACE FUNCTION keep_id_sequence_ahead() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    sequence_name text := pg_get_serial_sequence(TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME, 'id');
    last_assigned bigint;
    was_handed_out boolean;
BEGIN
    EXECUTE format('SELECT last_value, is_called FROM %s', sequence_name) INTO last_assigned, was_handed_out;
    IF NEW.id > last_assigned OR (NEW.id = last_assigned AND NOT was_handed_out) THEN
        -- setval is not transactional: serialize the clients that move one table's sequence so that
        -- it only ever moves forward.
        PERFORM pg_advisory_xact_lock(TG_RELID::integer, 1);
        EXECUTE format('SELECT last_value, is_called FROM %s', sequence_name) INTO last_assigned, was_handed_out;
        IF NEW.id > last_assigned OR (NEW.id = last_assigned AND NOT was_handed_out) THEN
            PERFORM setval(sequence_name, NEW.id);
        END IF;
    END IF;
    RETURN NEW;
END;
$$;

COMMENT ON FUNCTION keep_id_sequence_ahead() IS
    'Moves a table''s id sequence past an id a client chose, so server-assigned ids never collide with it.';
