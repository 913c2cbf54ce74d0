-- Generic collections, served the way json-server serves db.json (SPEC §3): every top-level name
-- of a seed file is a collection of JSON documents, or a singular resource.
CREATE TABLE collections (
    name        text        NOT NULL,
    kind        text        NOT NULL,
    next_id     bigint      NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT collections_pkey PRIMARY KEY (name),
    CONSTRAINT collections_kind_known CHECK (kind IN ('plural', 'singular')),
    CONSTRAINT collections_name_format CHECK (name ~ '^[A-Za-z0-9_-]{1,100}$'),
    CONSTRAINT collections_next_id_positive CHECK (next_id >= 1)
);

COMMENT ON TABLE collections IS 'The generic collections and singular resources a seed file (or PUT /db) defined.';
COMMENT ON COLUMN collections.name IS 'The top-level name in db.json, which is also the URL path segment.';
COMMENT ON COLUMN collections.kind IS 'plural: an array of records; singular: one object (e.g. /profile).';
COMMENT ON COLUMN collections.next_id IS 'The integer id the next POST without an id gets; never moves back, so ids are not reused.';
COMMENT ON COLUMN collections.created_at IS 'When the collection was defined.';

CREATE TABLE documents (
    collection  text        NOT NULL,
    id          text        NOT NULL,
    body        json        NOT NULL,
    doc         jsonb       GENERATED ALWAYS AS (body::jsonb) STORED,
    position    bigint      GENERATED ALWAYS AS IDENTITY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    version     integer     NOT NULL DEFAULT 1,
    CONSTRAINT documents_pkey PRIMARY KEY (collection, id),
    CONSTRAINT documents_collection_fkey FOREIGN KEY (collection)
        REFERENCES collections (name) ON DELETE CASCADE,
    CONSTRAINT documents_body_is_object CHECK (json_typeof(body) = 'object'),
    CONSTRAINT documents_version_positive CHECK (version >= 1)
);

-- Containment (`doc @> '{"postId":1}'`) serves equality filters and the children of nested routes.
CREATE INDEX documents_doc_idx ON documents USING gin (doc jsonb_path_ops);
-- Lists come back in the order records were created, as json-server keeps its arrays.
CREATE INDEX documents_collection_position_idx ON documents (collection, position);

COMMENT ON TABLE documents IS 'The records of generic collections, one JSON document each.';
COMMENT ON COLUMN documents.collection IS 'The collection the record belongs to.';
COMMENT ON COLUMN documents.id IS 'The record''s id as text (1 and "1" name the same record, as in URLs); empty for a singular resource.';
COMMENT ON COLUMN documents.body IS 'The record exactly as written: member order and every digit of every number kept.';
COMMENT ON COLUMN documents.doc IS 'The same record as jsonb, for filters, sorting and indexes.';
COMMENT ON COLUMN documents.position IS 'Creation order; lists without _sort follow it.';
COMMENT ON COLUMN documents.created_at IS 'When the record was first written.';
COMMENT ON COLUMN documents.updated_at IS 'When the record was last written.';
COMMENT ON COLUMN documents.version IS 'Number of writes this record has had, starting at 1.';
