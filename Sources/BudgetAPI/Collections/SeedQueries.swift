import Postgres

/// The SQL a seed writes: typed records with their bookkeeping kept, documents in batches, and the wipe.
enum SeedQueries {
    /// True when no typed record and no generic collection exists.
    static let isEmpty: Query = "SELECT " + Query.joined(
        TypedResources.all.map { "NOT EXISTS (SELECT 1 FROM \($0.table))" } + ["NOT EXISTS (SELECT 1 FROM collections)"],
        separator: " AND ")

    /// Deletes everything a seed defines, the typed tables in reverse `TypedResources.all` order (the records
    /// naming an owner first), each deletion captured for the change feed (migrations/0013). Documents go
    /// with their collections (ON DELETE CASCADE).
    static let wipe = (TypedResources.all.reversed().map { "DELETE FROM \($0.collection);" } + ["DELETE FROM collections;"])
        .joined(separator: " ")

    /// Inserts records in the order given, so `position` keeps the file's order.
    static func insert(keys: [String], bodies: [String], into collection: String) -> Query {
        """
        INSERT INTO documents (collection, id, body)
        SELECT \(collection), r.id, r.body::json
        FROM unnest(\(keys)::text[], \(bodies)::text[]) WITH ORDINALITY AS r(id, body, n)
        ORDER BY r.n
        """
    }
}
