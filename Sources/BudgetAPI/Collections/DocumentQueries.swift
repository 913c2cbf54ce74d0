import BudgetCore
import Postgres

/// The SQL behind the generic collections; the only place that knows the `collections` and `documents` columns.
///
/// Bodies go in as the exact JSON text `JSONWriter` wrote and come out as `documents.body` (json, not jsonb),
/// so member order and every digit survive; `doc` (jsonb) serves the filters and containment tests.
///
/// Collections and documents are a ledger's: every statement names its ledger, collection names and
/// record ids are per ledger (docs/households.md).
enum DocumentQueries {
    static func kind(of collection: String, in ledger: LedgerID) -> Query {
        "SELECT kind FROM collections WHERE ledger_id = \(ledger) AND name = \(collection)"
    }

    /// Every collection name of the ledger in the order the collections were defined.
    static func names(in ledger: LedgerID) -> Query {
        "SELECT name FROM collections WHERE ledger_id = \(ledger) ORDER BY created_at, name"
    }

    /// Every collection's name and kind (`CollectionKind`) of the ledger, in the order the collections were defined.
    static func namesAndKinds(in ledger: LedgerID) -> Query {
        "SELECT name, kind FROM collections WHERE ledger_id = \(ledger) ORDER BY created_at, name"
    }

    /// The bodies of a plural collection's records, in creation order, as text.
    static func bodies(of collection: String, in ledger: LedgerID) -> Query {
        "SELECT d.body::text FROM documents d WHERE d.ledger_id = \(ledger) AND d.collection = \(collection) ORDER BY d.position"
    }

    /// Defines a collection; `clock_timestamp()` rather than `now()` keeps a seed file's order within one transaction.
    static func define(_ collection: String, kind: CollectionKind, nextID: Int64, in ledger: LedgerID) -> Query {
        """
        INSERT INTO collections (ledger_id, name, kind, next_id, created_at)
        VALUES (\(ledger), \(collection), \(kind.rawValue), \(nextID), clock_timestamp())
        """
    }

    /// Takes the next server id; the UPDATE holds the row lock until commit, so concurrent POSTs never share one.
    static func takeNextID(in collection: String, ledger: LedgerID) -> Query {
        "UPDATE collections SET next_id = next_id + 1 WHERE ledger_id = \(ledger) AND name = \(collection) RETURNING next_id - 1"
    }

    /// Moves the next server id past an integer id a client chose, so it is never handed out again.
    ///
    /// The cast matters: PostgreSQL would infer `integer` for the parameter from `+ 1`, and a chosen id past
    /// 2^31 would fail the whole write (a 500) instead of moving `next_id` (a bigint) past it.
    static func reserve(_ id: Int64, in collection: String, ledger: LedgerID) -> Query {
        "UPDATE collections SET next_id = greatest(next_id, \(id)::bigint + 1) WHERE ledger_id = \(ledger) AND name = \(collection)"
    }

    static func insert(_ body: JSONObject, key: String, into collection: String, ledger: LedgerID) -> Query {
        """
        INSERT INTO documents (ledger_id, collection, id, body)
        VALUES (\(ledger), \(collection), \(key), \(JSONWriter.string(.object(body)))::json)
        RETURNING body
        """
    }

    /// The record's body; `lockingIt` holds the row until commit so a read-modify-write loses no update.
    static func find(_ key: String, in collection: String, ledger: LedgerID, lockingIt: Bool = false) -> Query {
        let lock: Query = lockingIt ? " FOR UPDATE" : ""
        return "SELECT body FROM documents WHERE ledger_id = \(ledger) AND collection = \(collection) AND id = \(key)\(lock)"
    }

    /// Writes a new body; every write counts in `version` and `updated_at`, which sync builds on (docs/sync.md).
    static func update(_ key: String, in collection: String, ledger: LedgerID, to body: JSONObject) -> Query {
        """
        UPDATE documents
        SET body = \(JSONWriter.string(.object(body)))::json, version = version + 1, updated_at = now()
        WHERE ledger_id = \(ledger) AND collection = \(collection) AND id = \(key)
        RETURNING body
        """
    }

    static func delete(_ key: String, in collection: String, ledger: LedgerID) -> Query {
        "DELETE FROM documents WHERE ledger_id = \(ledger) AND collection = \(collection) AND id = \(key) RETURNING body"
    }

    /// Deletes, in every plural collection of the ledger, the records whose `field` names `id` (json-server's
    /// dependents).
    static func deleteReferencing(_ id: DocumentID, field: String, in ledger: LedgerID) -> Query {
        """
        DELETE FROM documents d USING collections c
        WHERE c.ledger_id = \(ledger) AND d.ledger_id = c.ledger_id AND c.name = d.collection AND c.kind = 'plural'
          AND \(references(id, field: field))
        """
    }

    /// True for a record `d` whose `field` is `id` as a number or as a string, as JavaScript's `==` compares.
    ///
    /// Containment (`@>`) lets the GIN index on `doc` find the records.
    static func references(_ id: DocumentID, field: String) -> Query {
        let asString = JSONWriter.string(.object([field: .string(id.key)]))
        guard case .number = DocumentID(pathSegment: id.key).value else {
            return "d.doc @> \(asString)::jsonb"
        }
        let asNumber = JSONWriter.string(.object([field: .number(id.key)]))
        return "(d.doc @> \(asNumber)::jsonb OR d.doc @> \(asString)::jsonb)"
    }
}

/// What a collection holds: an array of records, or one object such as `/profile`.
enum CollectionKind: String, Sendable {
    case plural
    case singular
}
