import HTTPServer
import Postgres

/// What kind of account money sits in (docs/accounts.md); the first four are on budget unless told otherwise.
enum AccountType {
    static let all = ["checking", "savings", "cash", "credit", "loan", "investment", "other"]
    /// Money a household spends from day to day: budgeted. Loans and investments are tracked, not budgeted.
    static let onBudgetByDefault: Set<String> = ["checking", "savings", "cash", "credit"]
}

/// The writable fields of an account as a request gave them; nil means the request left the field out.
struct AccountFields: Sendable {
    var id: Int64?
    var name: String?
    var type: String?
    /// Absent means the type's default (`AccountType.onBudgetByDefault`) on create and replace.
    var onBudget: Bool?
    /// Absent means false on create and replace.
    var closed: Bool?
    /// Absent (`.none`), cleared (`.some(nil)`) or set.
    var note: String??
    /// Absent means 0.00 on create and replace.
    var openingBalance: Money?
    /// `YYYY-MM-DD`; absent means today on create, and the stored day on replace.
    var openedOn: String?
    /// Only from a seed (`WriteMode.seed`): when the account was last reconciled, which the server keeps.
    var lastReconciledAt: Timestamp?

    static let known = AccountRecord.shape.writableNames
    static let readOnly = AccountRecord.shape.readOnlyNames

    /// Validates one JSON object, reporting every invalid field at once (422).
    init(_ members: JSONObject, mode: WriteMode, fieldPrefix: String = "") throws {
        var reader = FieldReader(members, prefix: fieldPrefix)
        reader.rejectUnknown(known: Self.known, ignored: Self.readOnly)
        if mode.isComplete {
            reader.require("name")
            reader.require("type")
        }
        id = reader.id("id")
        name = reader.string("name", length: 1...100)
        type = reader.oneOf("type", AccountType.all)
        onBudget = reader.bool("onBudget")
        closed = reader.bool("closed")
        note = reader.nullable("note") { $0.string("note", length: 0...2000) }
        openingBalance = reader.money("openingBalance")
        openedOn = reader.day("openedOn")
        if mode == .seed, !reader.isNull("lastReconciledAt") { lastReconciledAt = reader.timestamp("lastReconciledAt") }
        guard reader.errors.isEmpty else { throw APIError.invalidFields(reader.errors) }
    }

    /// Whether the account is on budget: as given, else as its type has it.
    var isOnBudget: Bool? { onBudget ?? type.map(AccountType.onBudgetByDefault.contains) }
}

/// The members of an account, declared once (see `RecordShape`); the SQL reads an account row `a` and the
/// sums `f` of its transactions, which `AccountQueries.sums` joins.
enum AccountRecord {
    /// The balances follow docs/accounts.md: a transaction's positive `amount` is money out.
    static let shape = RecordShape(
        recordName: "account",
        fields: [
            RecordField("id", "a.id", .integer, .stored),
            RecordField("name", "a.name", .text, .stored, isSearchable: true),
            RecordField("type", "a.type", .text, .stored),
            RecordField("onBudget", "a.on_budget", .boolean, .stored),
            RecordField("closed", "a.closed", .boolean, .stored),
            RecordField("note", "a.note", .text, .stored, isSearchable: true),
            RecordField("openingBalance", "a.opening_balance", .money, .stored),
            RecordField("openedOn", "a.opened_on", .date, .stored),
            RecordField("balance", "a.opening_balance - f.spent", .money, .derived),
            RecordField("clearedBalance", "a.opening_balance - f.spent + f.uncleared", .money, .derived),
            RecordField("unclearedBalance", "0.00 - f.uncleared", .money, .derived),
            RecordField("lastReconciledAt", "a.last_reconciled_at", .timestamp, .kept),
            RecordField("createdAt", "a.created_at", .timestamp, .kept),
            RecordField("updatedAt", "a.updated_at", .timestamp, .kept),
            RecordField("version", "a.version", .integer, .kept),
        ])
}
