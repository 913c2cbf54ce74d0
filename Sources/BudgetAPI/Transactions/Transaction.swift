import HTTPServer
import Postgres

/// The writable fields of a transaction as a request gave them; nil means the request left the field out.
struct TransactionFields: Sendable {
    var id: Int64?
    var categoryID: Int64?
    var title: String?
    var amount: Money?
    /// `YYYY-MM-DD`; absent means today in the server's time zone on create and replace.
    var date: String?
    /// Absent (`.none`), cleared (`.some(nil)`) or set.
    var note: String??
    /// The row's key in the bank statement it came from (docs/import.md): absent, cleared or set, as `note`.
    var importID: String??

    static let known = TransactionRecord.shape.writableNames
    /// Server-kept fields that clients may send back, and `_expand`'s; writes ignore them.
    static let readOnly = TransactionRecord.shape.readOnlyNames.union(["category"])

    /// Validates one JSON object, reporting every invalid field at once (422).
    ///
    /// `categoryIDFromPath` is the category of a nested route (`POST /categories/:id/transactions`): it wins
    /// over the body, so the body need not repeat it.
    init(
        _ members: JSONObject,
        mode: WriteMode,
        categoryIDFromPath: Int64? = nil,
        fieldPrefix: String = ""
    ) throws {
        var reader = FieldReader(members, prefix: fieldPrefix)
        reader.rejectUnknown(known: Self.known, ignored: Self.readOnly)
        if mode == .complete {
            if categoryIDFromPath == nil { reader.require("categoryId") }
            reader.require("title")
            reader.require("amount")
        }
        id = reader.id("id")
        categoryID = categoryIDFromPath ?? reader.id("categoryId")
        title = reader.string("title", length: 1...200)
        amount = reader.money("amount")
        date = reader.day("date")
        if reader.isNull("note") {
            note = .some(nil)
        } else if let text = reader.string("note", length: 0...2000) {
            note = .some(text)
        }
        if reader.isNull("importId") {
            importID = .some(nil)
        } else if let text = reader.string("importId", length: 1...100) {
            importID = .some(text)
        }
        guard reader.errors.isEmpty else { throw APIError.invalidFields(reader.errors) }
    }
}

/// The members of a transaction, declared once (see `RecordShape`).
enum TransactionRecord {
    /// The 409's words when a write would take an `importId` another transaction holds (docs/import.md).
    static let importIDTaken = "a transaction with this importId already exists (Location names it); a deleted one frees it"

    /// A transaction row `t`, each member declared once, in the JSON's order (README, "A walk through with curl").
    static let shape = RecordShape(recordName: "transaction", fields: [
        RecordField("id", "t.id", .integer, .stored),
        RecordField("categoryId", "t.category_id", .integer, .stored),
        RecordField("title", "t.title", .text, .stored, isSearchable: true),
        // json-server's q looks in strings and numbers; amounts are searchable as their text, e.g. q=12.50.
        RecordField("amount", "t.amount", .money, .stored, isSearchable: true),
        RecordField("date", "t.date", .date, .stored),
        RecordField("note", "t.note", .text, .stored, isSearchable: true),
        RecordField("importId", "t.import_id", .text, .stored),
        RecordField("createdAt", "t.created_at", .timestamp, .kept),
        RecordField("updatedAt", "t.updated_at", .timestamp, .kept),
        RecordField("version", "t.version", .integer, .kept),
    ])

    /// A transaction's CSV row (docs/api.md, CSV): its members with `category`, its category's title, right
    /// after `categoryId`, so that an exported file imports into another database by title. The row holds the
    /// category's id there too; `categoryTitles` puts the title in its place.
    static let csvRecord = PlainRecord(shape.fields.flatMap { field in
        field.name == "categoryId" ? [field, RecordField("category", field.sql, .integer, .derived)] : [field]
    })

    /// Every category's title of the ledger by id, read once per CSV answer (`CellLookup`) for `csvRecord`'s
    /// `category`.
    static func categoryTitles(in ledger: LedgerID) -> CellLookup {
        CellLookup(
            query: "SELECT c.id, c.title FROM categories c WHERE c.ledger_id = \(ledger)",
            member: shape.fields.firstIndex { $0.name == "categoryId" }! + 1)
    }

}
