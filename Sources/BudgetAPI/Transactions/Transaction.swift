import BudgetCore
import HTTPServer
import Postgres

/// The writable fields of a transaction as a request gave them; nil means the request left the field out.
struct TransactionFields: Sendable {
    var id: Int64?
    /// Absent, cleared (a transaction in an account may have no category: docs/accounts.md) or set.
    var categoryID: Int64??
    var title: String?
    var amount: Money?
    /// `YYYY-MM-DD`; absent means today in the server's time zone on create and replace.
    var date: String?
    /// Absent (`.none`), cleared (`.some(nil)`) or set.
    var note: String??
    /// The row's key in the bank statement it came from (docs/import.md): absent, cleared or set, as `note`.
    var importID: String??
    /// The account the money moved in (docs/accounts.md): absent, cleared or set.
    var accountID: Int64??
    /// `uncleared`, `cleared` or `reconciled`; absent means `uncleared` on create.
    var cleared: String?
    /// Who was paid or who paid: absent, cleared or set.
    var payee: String??
    /// Only from a seed (`WriteMode.seed`): the other side of a transfer, which the server keeps.
    var transferID: Int64?
    /// A split's parts (docs/api.md, Split transactions): absent, cleared (`null` turns a split back into a
    /// plain transaction) or set, the parts in the order given.
    var splits: [SplitPart]??

    /// Whether the write makes the transaction a split with these parts.
    var splitParts: [SplitPart]? { splits ?? nil }

    /// How many parts a split has: two at least (one part would be a plain transaction), and a bound on what
    /// one write may insert.
    static let partCount = 2...100

    static let known = TransactionRecord.shape.writableNames
    /// Server-kept fields that clients may send back, and `_expand`'s; writes ignore them.
    static let readOnly = TransactionRecord.shape.readOnlyNames.union(["category"])
    static let clearedStates = ["uncleared", "cleared", "reconciled"]

    /// Validates one JSON object, reporting every invalid field at once (422).
    ///
    /// `categoryIDFromPath` and `accountIDFromPath` are the owner of a nested route (`POST
    /// /categories/:id/transactions`, `POST /accounts/:id/transactions`): the path wins over the body, so
    /// the body need not repeat it.
    init(
        _ members: JSONObject,
        mode: WriteMode,
        categoryIDFromPath: Int64? = nil,
        accountIDFromPath: Int64? = nil,
        fieldPrefix: String = ""
    ) throws {
        var reader = FieldReader(members, prefix: fieldPrefix)
        reader.rejectUnknown(known: Self.known, ignored: Self.readOnly)
        if mode.isComplete {
            // Without an account a transaction counts in its category alone, so it needs one (docs/accounts.md).
            if !reader.has("categoryId"), categoryIDFromPath == nil, accountIDFromPath == nil,
                !reader.has("accountId") || reader.isNull("accountId"), !reader.has("splits") || reader.isNull("splits")
            {
                reader.fail("categoryId", "is required unless the transaction has an accountId")
            }
            reader.require("title")
            reader.require("amount")
        }
        id = reader.id("id")
        categoryID = categoryIDFromPath.map { .some($0) } ?? reader.nullable("categoryId") { $0.id("categoryId") }
        title = reader.string("title", length: 1...200)
        amount = reader.money("amount")
        date = reader.day("date")
        note = reader.nullable("note") { $0.string("note", length: 0...2000) }
        importID = reader.nullable("importId") { $0.string("importId", length: 1...100) }
        accountID = accountIDFromPath.map { .some($0) } ?? reader.nullable("accountId") { $0.id("accountId") }
        cleared = reader.oneOf("cleared", Self.clearedStates)
        payee = reader.nullable("payee") { $0.string("payee", length: 1...200) }
        if mode == .seed, !reader.isNull("transferId") { transferID = reader.id("transferId") }
        splits = reader.nullable("splits") { reader in
            reader.objects("splits", count: Self.partCount) { SplitPart(&$0, mode: mode) }
        }
        if let parts = splitParts {
            if categoryIDFromPath != nil {
                reader.fail("splits", "cannot be posted under a category, which the path names; post a split to /transactions")
            } else if case .some(.some(_)) = categoryID {
                reader.fail("categoryId", "must be absent or null on a split: each of its parts names its category")
            }
            // A PATCH that leaves the amount out is checked by the database against the stored one.
            if let amount {
                let total = Money(cents: parts.reduce(0) { $0 + $1.amount.cents })
                if total != amount {
                    reader.fail(
                        "splits",
                        "the parts add up to \(total), not to the amount \(amount) (a difference of \(Money(cents: amount.cents - total.cents)))")
                }
            }
        }
        guard reader.errors.isEmpty else { throw APIError.invalidFields(reader.errors) }
    }
}

/// One part of a split: a category's share of the transaction's amount, with a note of its own.
struct SplitPart: Sendable {
    /// Only from a seed: the part's id as an export wrote it. Clients may send a part's `id` back from what
    /// they read; a write replaces the parts, so it is ignored.
    var id: Int64?
    var categoryID: Int64
    var amount: Money
    var note: String?

    init(id: Int64?, categoryID: Int64, amount: Money, note: String?) {
        (self.id, self.categoryID, self.amount, self.note) = (id, categoryID, amount, note)
    }

    init?(_ reader: inout FieldReader, mode: WriteMode) {
        reader.rejectUnknown(known: mode == .seed ? ["id", "categoryId", "amount", "note"] : ["categoryId", "amount", "note"], ignored: ["id"])
        if !reader.has("categoryId") || reader.isNull("categoryId") { reader.fail("categoryId", "is required: each part names its category") }
        reader.require("amount")
        let id = mode == .seed ? reader.id("id") : nil
        let categoryID = reader.isNull("categoryId") ? nil : reader.id("categoryId")
        let amount = reader.money("amount")
        let note = reader.nullable("note") { $0.string("note", length: 0...2000) }
        guard let categoryID, let amount else { return nil }
        (self.id, self.categoryID, self.amount, self.note) = (id, categoryID, amount, note ?? nil)
    }
}

/// The members of a transaction, declared once (see `RecordShape`).
enum TransactionRecord {
    /// The 409's words when a write would take an `importId` another transaction holds (docs/import.md).
    static let importIDTaken = "a transaction with this importId already exists (Location names it); a deleted one frees it"

    /// A transaction row `t`, each member declared once, in the JSON's order (README, "A walk through with
    /// curl"). A create without a date is today's, and `uncleared`. A replace without `importId`,
    /// `accountId`, `cleared` or `payee` keeps the stored one (`null` clears them): clients that predate
    /// those members replace records without knowing them, and must neither free the key that keeps a
    /// statement from being imported twice (docs/import.md) nor take a transaction out of its account or its
    /// reconciliation (docs/accounts.md).
    static let members = RecordMembers<TransactionFields>(
        recordName: "transaction", alias: "t",
        [
            .id,
            .stored("categoryId", "category_id", .integer, .nullable(\.categoryID, cast: "bigint")),
            .stored("title", "title", .text, .value(\.title), isSearchable: true),
            // json-server's q looks in strings and numbers; amounts are searchable as their text, e.g. q=12.50.
            .stored("amount", "amount", .money, .value(\.amount), isSearchable: true),
            .stored("date", "date", .date, .value(\.date, cast: "date", default: .today)),
            .stored("note", "note", .text, .nullable(\.note, cast: "text"), isSearchable: true),
            .stored("importId", "import_id", .text, .nullable(\.importID, cast: "text", keptWhenAbsent: true)),
            .stored("accountId", "account_id", .integer, .nullable(\.accountID, cast: "bigint", keptWhenAbsent: true)),
            .stored("cleared", "cleared", .text, .value(\.cleared, cast: "text", default: .sql("'uncleared'"), keptWhenAbsent: true)),
            .stored("payee", "payee", .text, .nullable(\.payee, cast: "text", keptWhenAbsent: true), isSearchable: true),
            // Only a seed writes it: the other side of a transfer, which the server keeps.
            .kept("transferId", "transfer_id", .integer) { "\($0.fields.transferID)::bigint" },
            .kept("parentId", "parent_id", .integer),
            // Only a split pays for its parts' subquery; every other transaction's is null. Its parts are rows
            // of their own, which `TransactionQueries` writes with their parent.
            .stored("splits", sql: "CASE WHEN t.split THEN \(parts(of: "t")) END", .json),
            .createdAt,
            .updatedAt,
            .version,
        ])
    static var shape: RecordShape { members.shape }

    /// `shape`'s columns for a row that is no split, as a plain POST writes: `splits` is null without the parts'
    /// subquery, whose plan PostgreSQL would otherwise set up for every statement (bench/README.md, "The write path").
    static let unsplitColumns: Query = PlainRecord(
        shape.fields.map { field in field.name == "splits" ? RecordField(field.name, "NULL::json", field.type, field.origin) : field }
    ).columns

    /// The JSON array of the split `alias`'s parts in id order, `[{"id":…,"categoryId":…,"amount":…,"note":…}]`,
    /// rendered by `row_to_json`, whose numbers and strings are the bytes `PlainRecord` writes.
    static func parts(of alias: SQLIdentifier) -> Query {
        """
        (SELECT \(partsArray) FROM transactions part \
        WHERE part.ledger_id = \(alias).ledger_id AND part.parent_id = \(alias).id)
        """
    }

    /// The array of rows `part` (id, category_id, amount, note), as `json`.
    static var partsArray: Query {
        let element = SQLFragments.jsonObject(columns: "part.id AS id, part.category_id AS \"categoryId\", part.amount AS amount, part.note AS note")
        return "(\(SQLFragments.jsonArray(of: element, orderBy: "part.id")))::json"
    }

    /// A transaction's CSV row (docs/api.md, CSV): its members with `category`, its category's title, right
    /// after `categoryId`, so that an exported file imports into another database by title. The row holds the
    /// category's id there too; `categoryTitles` puts the title in its place.
    static let csvRecord = PlainRecord(
        shape.fields.flatMap { field in
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
