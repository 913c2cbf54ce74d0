import BudgetCore
import HTTPServer

/// The writable fields of a category as a request gave them; nil means the request left the field out.
struct CategoryFields: Sendable {
    var id: Int64?
    var title: String?
    var amount: Money?
    /// Whether what a month leaves carries into the next (docs/api.md, Months); absent means false on create
    /// and replace.
    var rollover: Bool?

    static let known = CategoryRecord.shape.writableNames
    /// Computed or server-kept fields that clients may send back, and `_embed`'s; writes ignore them (docs/api.md).
    static let readOnly = CategoryRecord.monthShape.readOnlyNames.union(["transactions"])

    /// Validates one JSON object, reporting every invalid field at once (422).
    init(_ members: JSONObject, mode: WriteMode, fieldPrefix: String = "") throws {
        var reader = FieldReader(members, prefix: fieldPrefix)
        reader.rejectUnknown(known: Self.known, ignored: Self.readOnly)
        if mode.isComplete {
            reader.require("title")
            reader.require("amount")
        }
        id = reader.id("id")
        title = reader.string("title", length: 1...100)
        amount = reader.money("amount", minimum: Money(cents: 0))
        rollover = reader.bool("rollover")
        guard reader.errors.isEmpty else { throw APIError.invalidFields(reader.errors) }
    }
}

/// The members of a category, declared once (see `RecordMembers`); the SQL reads a category row `c` and its
/// figures `f`, which `CategoryQueries` joins.
enum CategoryRecord {
    /// Every member a category can have, each declared once, in the JSON's order (README, "A walk through
    /// with curl"), over a category row `c` and its figures `f`; the month members appear only in a month
    /// (`?month=`), where `spent` and `remaining` are the month's (docs/api.md, Months).
    private static let all: [(member: RecordMember<CategoryFields>, isMonthly: Bool)] = [
        (.id, false),
        (.stored("title", "title", .text, .value(\.title), isSearchable: true), false),
        (.stored("amount", "amount", .money, .value(\.amount)), false),
        (.stored("rollover", "rollover", .boolean, .value(\.rollover, cast: "boolean", default: .sql("false"))), false),
        (.derived("month", "f.month", .month), true),
        (.derived("budgeted", "f.budgeted", .money), true),
        (.derived("carried", "f.carried", .money), true),
        (.derived("spent", "f.spent", .money), false),
        (.derived("remaining", "f.remaining", .money), false),
        (.createdAt, false),
        (.updatedAt, false),
        (.version, false),
    ]

    /// A category as it is: `spent` and `remaining` over all time.
    static let members = RecordMembers(recordName: "category", alias: "c", all.filter { !$0.isMonthly }.map(\.member))
    static var shape: RecordShape { members.shape }
    /// A category seen in a month.
    static let monthShape = RecordMembers(recordName: "category", alias: "c", all.map(\.member)).shape
}
