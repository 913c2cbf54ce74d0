import HTTPServer

/// The writable fields of a category as a request gave them; nil means the request left the field out.
struct CategoryFields: Sendable {
    var id: Int64?
    var title: String?
    var amount: Money?
    /// Whether what a month leaves carries into the next (docs/api.md, Months); absent means false on create
    /// and replace.
    var rollover: Bool?

    static let known = CategoryQueries.shape.writableNames
    /// Computed or server-kept fields that clients may send back, and `_embed`'s; writes ignore them (docs/api.md).
    static let readOnly = CategoryQueries.monthShape.readOnlyNames.union(["transactions"])

    /// Validates one JSON object, reporting every invalid field at once (422).
    init(_ members: JSONObject, mode: WriteMode, fieldPrefix: String = "") throws {
        var reader = FieldReader(members, prefix: fieldPrefix)
        reader.rejectUnknown(known: Self.known, ignored: Self.readOnly)
        if mode == .complete {
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
