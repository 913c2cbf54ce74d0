import BudgetCore
import Postgres

/// Writes one ledger's data as a json-server db.json, the shape `Seeder` loads back unchanged (docs/configuration.md, export).
///
/// The typed tables come first, in `TypedResources.all` order, as their API JSON without the derived members
/// (a category's `spent` and `remaining`); then every generic collection in the order it was defined, each
/// record's body exactly as stored. Each table is read through a cursor and written a batch at a time, so an export of any size holds one batch in memory:
/// `GET /db` streams it (`Database.streamedAnswer`) and `budget-server export` writes each piece as it comes.
/// Run it in one REPEATABLE READ transaction, for one consistent snapshot.
public final class Exporter: ChunkSource, @unchecked Sendable {
    /// One member of the document: a table or collection's records, or a singular resource's object.
    private enum Section {
        case records(name: String, element: ListElement, rows: Query)
        case singular(name: String)
    }

    private var sections: [Section]
    private var isFirstSection = true
    /// The section being written, through its cursor; nil between sections.
    private var current: ListRows?

    /// The ledger exported.
    private let ledger: LedgerID

    /// The ledger's sections, in order; the collections come from `connection`, so call it in the export's
    /// transaction.
    public init(on connection: Connection, ledger: LedgerID) throws {
        self.ledger = ledger
        sections = TypedResources.all.map { resource in
            .records(name: resource.collection, element: .plain(resource.shape.exported), rows: resource.exportRows(in: ledger))
        }
        for row in try connection.query(DocumentQueries.namesAndKinds(in: ledger)) {
            let name = try row.decode(String.self, at: 0)
            switch CollectionKind(rawValue: try row.decode(String.self, at: 1)) {
            case .singular: sections.append(.singular(name: name))
            case .plural, nil: sections.append(.records(name: name, element: .rendered("d.body"), rows: DocumentQueries.bodies(of: name, in: ledger)))
            }
        }
    }

    /// The next piece of the document; nil once it is complete.
    public func next(on connection: Connection) throws -> [UInt8]? {
        if let current {
            if let piece = try current.next(on: connection) { return piece }
            self.current = nil
            try connection.execute("CLOSE \(SQLIdentifier(Self.cursorName))")
        }
        guard !sections.isEmpty else { return nil }
        var piece: [UInt8] = [UInt8(ascii: isFirstSection ? "{" : ",")]
        isFirstSection = false
        switch sections.removeFirst() {
        case .records(let name, let element, let rows):
            piece += JSONWriter.bytes(.string(name)) + [UInt8(ascii: ":")]
            let records = ListRows(
                cursor: try Cursor(Self.cursorName, for: rows, on: connection), element: element,
                opening: [UInt8(ascii: "[")], closing: [UInt8(ascii: "]")] + (sections.isEmpty ? [UInt8(ascii: "}")] : []))
            current = records
            piece += try records.next(on: connection) ?? []
        case .singular(let name):
            piece += JSONWriter.bytes(.string(name)) + [UInt8(ascii: ":")]
            piece += try connection.json(DocumentQueries.find("", in: name, ledger: ledger)) ?? Array("{}".utf8)
            if sections.isEmpty { piece.append(UInt8(ascii: "}")) }
        }
        return piece
    }

    private static let cursorName = "budget_export"

    /// The whole document at once, for answers that are small by nature (`PUT /db` answers what it loaded).
    public static func export(_ connection: Connection, ledger: LedgerID) throws -> [UInt8] {
        let exporter = try Exporter(on: connection, ledger: ledger)
        var bytes: [UInt8] = []
        while let piece = try exporter.next(on: connection) { bytes += piece }
        return bytes
    }
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
