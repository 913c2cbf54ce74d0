import Postgres

/// Writes the whole database as a json-server db.json, the shape `Seeder` loads back unchanged (docs/configuration.md, export).
///
/// The typed tables come first, as their API JSON without the computed `spent` and `remaining`; then every
/// generic collection in the order it was defined, each record's body exactly as stored. Each table is read
/// through a cursor and written a batch at a time, so an export of any size holds one batch in memory:
/// `GET /db` streams it (`Database.streamedAnswer`) and `budget-server export` writes each piece as it comes.
/// Run it in one REPEATABLE READ transaction, for one consistent snapshot.
public final class Exporter: ChunkSource, @unchecked Sendable {
    /// Computed members of a category that a seed would ignore anyway.
    static let computedCategoryMembers: Set<String> = ["spent", "remaining"]

    /// One member of the document: a table or collection's records, or a singular resource's object.
    private enum Section {
        case records(name: String, element: ListElement, rows: Query)
        case singular(name: String)
    }

    private var sections: [Section]
    private var isFirstSection = true
    /// The section being written, through its cursor; nil between sections.
    private var current: ListRows?

    /// The sections, in order; the collections come from `connection`, so call it in the export's transaction.
    public init(on connection: Connection) throws {
        let categories = Categories.record.without(Self.computedCategoryMembers)
        sections = [
            .records(name: Categories.collection, element: .plain(categories),
                     rows: "SELECT \(categories.columns) FROM \(Categories.listSource) ORDER BY \(Categories.defaultOrder)"),
            .records(name: Transactions.collection, element: .plain(Transactions.record),
                     rows: "SELECT \(Transactions.record.columns) FROM \(Transactions.listSource) ORDER BY \(Transactions.defaultOrder)"),
        ]
        for row in try connection.query(DocumentQueries.namesAndKinds) {
            let name = try row.decode(String.self, at: 0)
            switch CollectionKind(rawValue: try row.decode(String.self, at: 1)) {
            case .singular: sections.append(.singular(name: name))
            case .plural, nil: sections.append(.records(name: name, element: .rendered("d.body"), rows: DocumentQueries.bodies(of: name)))
            }
        }
    }

    /// The next piece of the document; nil once it is complete.
    public func next(on connection: Connection) throws -> [UInt8]? {
        if let current {
            if let piece = try current.next(on: connection) { return piece }
            self.current = nil
            try connection.execute(script: "CLOSE \(Self.cursorName)")
        }
        guard !sections.isEmpty else { return nil }
        var piece: [UInt8] = [UInt8(ascii: isFirstSection ? "{" : ",")]
        isFirstSection = false
        switch sections.removeFirst() {
        case .records(let name, let element, let rows):
            piece += JSONWriter.bytes(.string(name)) + [UInt8(ascii: ":")]
            let records = ListRows(cursor: try Cursor(Self.cursorName, for: rows, on: connection), element: element,
                                   opening: [UInt8(ascii: "[")], closing: [UInt8(ascii: "]")] + (sections.isEmpty ? [UInt8(ascii: "}")] : []))
            current = records
            piece += try records.next(on: connection) ?? []
        case .singular(let name):
            piece += JSONWriter.bytes(.string(name)) + [UInt8(ascii: ":")]
            piece += try connection.json(DocumentQueries.find("", in: name)) ?? Array("{}".utf8)
            if sections.isEmpty { piece.append(UInt8(ascii: "}")) }
        }
        return piece
    }

    private static let cursorName = "budget_export"

    /// The whole document at once, for answers that are small by nature (`PUT /db` answers what it loaded).
    public static func export(_ connection: Connection) throws -> [UInt8] {
        let exporter = try Exporter(on: connection)
        var bytes: [UInt8] = []
        while let piece = try exporter.next(on: connection) { bytes += piece }
        return bytes
    }
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
