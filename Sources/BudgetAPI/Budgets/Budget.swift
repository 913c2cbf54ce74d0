import BudgetCore
import HTTPServer

/// The writable fields of a month's budget as a request gave them; nil means the request left the field out.
struct BudgetFields: Sendable {
    var id: Int64?
    var categoryID: Int64?
    var month: Month?
    var amount: Money?

    static let known = BudgetRecord.shape.writableNames
    /// Server-kept fields that clients may send back, and `_expand`'s; writes ignore them.
    static let readOnly = BudgetRecord.shape.readOnlyNames.union(["category"])

    /// Validates one JSON object, reporting every invalid field at once (422).
    ///
    /// On a nested route the path names the category (and, for `PUT /categories/:id/budgets/:month`, the
    /// month): the body need not repeat them, and one it does repeat must agree.
    init(
        _ members: JSONObject,
        mode: WriteMode,
        categoryIDFromPath: Int64? = nil,
        monthFromPath: Month? = nil,
        fieldPrefix: String = ""
    ) throws {
        var reader = FieldReader(members, prefix: fieldPrefix)
        var known = Self.known, readOnly = Self.readOnly
        if monthFromPath != nil {
            // The month route's record is the one of its path: an id in the body is what the client read back.
            known.remove("id")
            readOnly.insert("id")
        }
        reader.rejectUnknown(known: known, ignored: readOnly)
        if mode.isComplete {
            if categoryIDFromPath == nil { reader.require("categoryId") }
            if monthFromPath == nil { reader.require("month") }
            reader.require("amount")
        }
        id = monthFromPath == nil ? reader.id("id") : nil
        let bodyCategoryID = reader.id("categoryId")
        let bodyMonth = reader.month("month")
        amount = reader.money("amount", minimum: Money(cents: 0))
        if let categoryIDFromPath, let bodyCategoryID, bodyCategoryID != categoryIDFromPath, monthFromPath != nil {
            reader.fail("categoryId", "must equal the category in the path (\(categoryIDFromPath))")
        }
        if let monthFromPath, let bodyMonth, bodyMonth != monthFromPath {
            reader.fail("month", "must equal the month in the path (\(monthFromPath))")
        }
        categoryID = categoryIDFromPath ?? bodyCategoryID
        month = monthFromPath ?? bodyMonth
        guard reader.errors.isEmpty else { throw APIError.invalidFields(reader.errors) }
    }
}

/// The members of a month's budget, declared once (see `RecordMembers`).
enum BudgetRecord {
    /// A budget row `b`, each member declared once, in the JSON's order (docs/api.md, Months).
    static let members = RecordMembers<BudgetFields>(
        recordName: "budget", alias: "b",
        [
            .id,
            .stored("categoryId", "category_id", .integer, .value(\.categoryID)),
            .stored("month", "month", .month, .value(\.month?.firstDay, cast: "date")),
            .stored("amount", "amount", .money, .value(\.amount), isSearchable: true),
            .createdAt,
            .updatedAt,
            .version,
        ])
    static var shape: RecordShape { members.shape }
}
