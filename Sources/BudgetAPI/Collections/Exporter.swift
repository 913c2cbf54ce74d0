import Postgres

/// Writes the whole database as a json-server db.json, the shape `Seeder` loads back unchanged (docs/configuration.md, export).
///
/// The typed tables come first, as their API JSON without the computed `spent` and `remaining`; then every
/// generic collection in the order it was defined, each record's body exactly as stored.
public enum Exporter {
    /// Computed members of a category that a seed would ignore anyway.
    static let computedCategoryMembers: Set<String> = ["spent", "remaining"]

    /// The db.json document as compact JSON; run it in a transaction for one consistent snapshot.
    public static func export(_ connection: Connection) throws -> [UInt8] {
        var members: [(name: String, json: [UInt8])] = [
            (Categories.collection, try categories(connection)),
            (Transactions.collection, try connection.json(TransactionQueries.list(expandingCategory: false)) ?? Array("[]".utf8)),
        ]
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

    /// The categories as the API renders them, minus the members computed from transactions.
    private static func categories(_ connection: Connection) throws -> [UInt8] {
        let rendered = try connection.json(CategoryQueries.list(embeddingTransactions: false)) ?? Array("[]".utf8)
        guard case .array(let records) = try JSONParser.parse(rendered) else { return rendered }
        let stripped = records.map { record -> JSONValue in
            guard case .object(var members) = record else { return record }
            for name in computedCategoryMembers { members[name] = nil }
            return .object(members)
        }
        return JSONWriter.bytes(.array(stripped))
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
    public let categories: Int
    public let transactions: Int
    /// Each generic collection's name and record count (nil for a singular resource), in file order.
    public let collections: [(name: String, records: Int?)]

    init(_ plan: SeedPlan) {
        categories = plan.categories.count
        transactions = plan.transactions.count
        collections = plan.collections.map { ($0.name, $0.kind == .plural ? $0.records.count : nil) }
    }

    public var description: String {
        var parts = ["\(categories) categories", "\(transactions) transactions"]
        parts += collections.map { name, records in records.map { "\(name): \($0) records" } ?? "\(name): singular" }
        return "seeded " + parts.joined(separator: ", ")
    }
}
