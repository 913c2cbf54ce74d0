-- The list language (SPEC §4) compares JSON members with query text by the value's type, not by
-- JavaScript's coercion: numbers numerically, ISO dates by date, other strings as text.

-- ISO 8601 text as a UTC timestamp, or NULL when the text is not one.
-- IMMUTABLE is honest: a zone-less value is read as UTC and a zoned one is converted with its own
-- offset, so the session's TimeZone never matters; ISO input reads the same under every DateStyle.
CREATE FUNCTION query_timestamp(value text) RETURNS timestamp
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
BEGIN
    IF value !~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$' THEN
        RETURN NULL;
    END IF;
    IF value ~ '(Z|[+-]\d{2}(:?\d{2})?)$' AND value ~ '[T ]' THEN
        RETURN value::timestamptz AT TIME ZONE 'UTC';
    END IF;
    RETURN value::timestamp;
EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format THEN
    -- Shaped like a date but not one (2024-02-30): not comparable as a date.
    RETURN NULL;
END;
$$;

COMMENT ON FUNCTION query_timestamp(text) IS
    'ISO 8601 date or date-time text as a UTC timestamp (zone-less text is UTC); NULL when it is not a valid one.';

-- How a JSON member compares with query text: -1, 0 or 1, or NULL when they are not comparable
-- (then no range filter matches, as json-server 1.x skips members of another type).
CREATE FUNCTION query_compare(element jsonb, value text) RETURNS integer
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    number_pattern constant text := '^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$';
    member_text text;
    member_time timestamp;
    value_time timestamp;
BEGIN
    IF element IS NULL OR value IS NULL THEN
        RETURN NULL;
    END IF;
    CASE jsonb_typeof(element)
    WHEN 'number' THEN
        IF value ~ number_pattern THEN
            RETURN sign(element::numeric - value::numeric)::integer;
        END IF;
        RETURN NULL;
    WHEN 'string' THEN
        member_text := element #>> '{}';
        -- SPEC §4: a string holding a number compares with a number-looking value numerically.
        IF member_text ~ number_pattern AND value ~ number_pattern THEN
            RETURN sign(member_text::numeric - value::numeric)::integer;
        END IF;
        member_time := query_timestamp(member_text);
        value_time := query_timestamp(value);
        IF member_time IS NOT NULL AND value_time IS NOT NULL THEN
            RETURN CASE WHEN member_time < value_time THEN -1 WHEN member_time > value_time THEN 1 ELSE 0 END;
        END IF;
        -- Byte order, as JavaScript compares strings by code unit, whatever the database's collation.
        RETURN CASE WHEN member_text COLLATE "C" < value THEN -1 WHEN member_text COLLATE "C" > value THEN 1 ELSE 0 END;
    WHEN 'boolean' THEN
        IF value IN ('true', 'false') THEN
            RETURN sign(element::boolean::integer - value::boolean::integer)::integer;
        END IF;
        RETURN NULL;
    ELSE
        RETURN NULL;
    END CASE;
END;
$$;

COMMENT ON FUNCTION query_compare(jsonb, text) IS
    'Compares a JSON member with query text by type: numbers (and numeric strings) numerically, ISO dates by date, other strings bytewise; NULL when incomparable.';
