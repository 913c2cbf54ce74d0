import Postgres

/// The SQL a seed writes: typed records with their bookkeeping kept, documents in batches, and the wipe.
enum SeedQueries {
    /// True when the ledger has no typed record and no generic collection.
    static func isEmpty(_ ledger: LedgerID) -> Query {
        "SELECT "
            + Query.joined(
                TypedResources.all.map { "NOT EXISTS (SELECT 1 FROM \($0.table) WHERE \($0.inLedger(ledger)))" }
                    + ["NOT EXISTS (SELECT 1 FROM collections WHERE ledger_id = \(ledger))"],
                separator: " AND ")
    }

    /// Deletes everything a seed defines in the ledger, one bound statement each: the typed tables in reverse
    /// `TypedResources.all` order (the records naming an owner first), each deletion captured for the change
    /// feed (migrations/0013), then the collections, whose documents go with them (ON DELETE CASCADE). Other
    /// ledgers keep everything.
    static func wipe(_ ledger: LedgerID) -> [Query] {
        TypedResources.all.reversed().map { "DELETE FROM \($0.table) WHERE \($0.inLedger(ledger))" }
            + ["DELETE FROM collections WHERE ledger_id = \(ledger)"]
    }

    /// Inserts records in the order given, so `position` keeps the file's order.
    static func insert(keys: [String], bodies: [String], into collection: String, ledger: LedgerID) -> Query {
        """
        INSERT INTO documents (ledger_id, collection, id, body)
        SELECT \(ledger), \(collection), r.id, r.body::json
        FROM unnest(\(keys)::text[], \(bodies)::text[]) WITH ORDINALITY AS r(id, body, n)
        ORDER BY r.n
        """
    }
}
