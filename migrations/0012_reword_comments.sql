-- The comment 0010 put on idempotency_keys cited a specification that is not part of this
-- repository, so someone reading it in psql (\dt+) could not follow the reference. It now cites the
-- project's own documentation; the wording is otherwise unchanged. (0009's comment on change_log had
-- the same fault; 0011 already replaced it.)
--
-- Applied migrations are never edited (the migrator checks their checksums), so the comment is
-- replaced here. The `--` notes inside 0005, 0006, 0009 and 0010 stay as they are: they live only in
-- those files, not in the database.

COMMENT ON TABLE idempotency_keys IS 'The first successful answer to each Idempotency-Key, replayed to retries for 24 hours (docs/sync.md).';
