import Postgres

/// Writes the whole database as a json-server db.json, the shape `Seeder` loads back unchanged (docs/configuration.md, export).
///
/// The typed tables come first, in `TypedResources.all` order, as their API JSON without the derived members
/// (a category's `spent` and `remaining`); then every generic collection in the order it was defined, each
/// record's body exactly as stored.
public enum Exporter {
    /// The db.json document as compact JSON; run it in a transaction for one consistent snapshot.
    public static func export(_ connection: Connection) throws -> [UInt8] {
        var members: [(name: String, json: [UInt8])] = try TypedResources.all.map { resource in
            (resource.collection, try connection.json(resource.exportList) ?? Array("[]".utf8))
        }
        for row in try connection.query(generic) {
            members.append((try row.decode(String.self, at: 0), row.bytes(at: 1) ?? Array("{}".utf8)))
        }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += JSONWriter.bytes(.string(member.name)) + [UInt8(ascii: ":")] + member.json
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// Each generic collection's name and JSON: the array of its bodies, or a singular resource's object.
    private static let generic: Query = """
        SELECT c.name, CASE c.kind
            WHEN 'singular' THEN (SELECT d.body::text FROM documents d WHERE d.collection = c.name AND d.id = '')
            ELSE (SELECT \(SQLFragments.jsonArray(of: "d.body", orderBy: "d.position"))
                  FROM documents d WHERE d.collection = c.name)
            END
        FROM collections c
        ORDER BY c.created_at, c.name
        """
}

/// What a seed loaded, for the operator's confirmation line.
public struct SeedSummary: Sendable, CustomStringConvertible {
    /// Each typed resource's name and record count, in `TypedResources.all` order.
    public let typed: [(name: String, records: Int)]
    /// Each generic collection's name and record count (nil for a singular resource), in file order.
    public let collections: [(name: String, records: Int?)]

    init(_ plan: SeedPlan) {
        typed = plan.typed.map { ($0.collection, $0.inserts.count) }
        collections = plan.collections.map { ($0.name, $0.kind == .plural ? $0.records.count : nil) }
    }

    /// How many records a seed loaded into the typed resource `name` (0 for a name that is not one).
    public func records(of name: String) -> Int {
        typed.first { $0.name == name }?.records ?? 0
    }

    public var description: String {
        var parts = typed.map { "\($0.records) \($0.name)" }
        parts += collections.map { name, records in records.map { "\(name): \($0) records" } ?? "\(name): singular" }
        return "seeded " + parts.joined(separator: ", ")
    }
}
