import BudgetCore
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

/// The members of an account, declared once (see `RecordMembers`); the SQL reads an account row `a` and the
/// sums `f` of its transactions, which `AccountQueries.sums` joins.
enum AccountRecord {
    /// The balances follow docs/accounts.md: a transaction's positive `amount` is money out. What a create
    /// gives a member the body left out: on budget as the type has it, open, no note, an opening balance of
    /// 0.00, opened today. A replace without `openedOn` keeps the stored day: it is when the opening balance
    /// was true, which a replace that does not mention it has no reason to move.
    static let members = RecordMembers<AccountFields>(
        recordName: "account", alias: "a",
        [
            .id,
            .stored("name", "name", .text, .value(\.name), isSearchable: true),
            .stored("type", "type", .text, .value(\.type, cast: "text")),
            // A new `type` alone leaves `onBudget` as it was: the default applies when an account is written whole.
            .stored("onBudget", "on_budget", .boolean, .value(\.onBudget, cast: "boolean", complete: \.isOnBudget)),
            .stored("closed", "closed", .boolean, .value(\.closed, cast: "boolean", default: .sql("false"))),
            .stored("note", "note", .text, .nullable(\.note, cast: "text"), isSearchable: true),
            .stored("openingBalance", "opening_balance", .money, .value(\.openingBalance, cast: "numeric", default: .sql("0.00"))),
            .stored("openedOn", "opened_on", .date, .value(\.openedOn, cast: "date", default: .today, keptWhenAbsent: true)),
            .derived("balance", "a.opening_balance - f.spent", .money),
            .derived("clearedBalance", "a.opening_balance - f.spent + f.uncleared", .money),
            .derived("unclearedBalance", "0.00 - f.uncleared", .money),
            .kept("lastReconciledAt", "last_reconciled_at", .timestamp) { "\($0.fields.lastReconciledAt)::timestamptz" },
            .createdAt,
            .updatedAt,
            .version,
        ])
    static var shape: RecordShape { members.shape }
}
