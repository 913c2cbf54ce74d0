import BudgetCore
import HTTPServer
import Postgres

/// Budget categories as a typed resource: `/categories` and `/categories/:id` (docs/api.md).
struct Categories: TypedResource {
    static let collection = "categories"
    static let recordName = "category"

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> CategoryFields {
        try CategoryFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: CategoryFields) -> Int64? { fields.id }

    static let members = CategoryRecord.members
    static let joins = CategoryQueries.balance
    static let listFormats = ListFormat.jsonOrCSV

    /// All time, or with `?month=` the month's figures (docs/api.md, Months); `_embed=transactions` either way.
    static func listSource(for request: Request, context: RecordContext) throws -> ListSource {
        var source = plainSource(in: context.ledger)
        if let text = request.queryValue(monthParameter) {
            let month = try MonthChoice(text, parameter: monthParameter)
            source = ListSource(
                from: CategoryQueries.source(month: month.sql(context.clock)), shape: CategoryRecord.monthShape,
                element: .plain(CategoryRecord.monthShape.record), tieBreak: idColumn, scope: inLedger(context.ledger),
                parameters: [monthParameter])
        }
        if try embedsTransactions(request) {
            source.element = .rendered(CategoryQueries.json(source.shape, embeddingTransactions: true))
        }
        return source
    }

    static func find(id: Int64, for request: Request, context: RecordContext) throws -> RecordRead {
        let source = try listSource(for: request, context: context)
        let query = CategoryQueries.find(id: id, source: source)
        return if case .plain(let record) = source.element { .plain(query, record) } else { .rendered(query) }
    }

    /// The query parameter that shows categories in a month: `YYYY-MM` or `current`.
    static let monthParameter = "month"

    static let constraints: [ResourceConstraint] = [
        .unique("categories_title_unique", field: "title", detail: "a category with this title already exists (titles are compared ignoring case)"),
        // Deleting a category deletes its transactions, but a part's money belongs to its split too.
        .keeps(
            "categories_keep_their_split_parts", field: "id",
            detail: "parts of splits name this category: give them another category, or delete their splits, first"),
    ]

    /// `_embed=transactions` nests each category's transactions, as json-server's `_embed` does.
    private static func embedsTransactions(_ request: Request) throws -> Bool {
        try request.relationNames("_embed", allowed: ["transactions"]).contains("transactions")
    }
}

extension Request {
    /// The comma-separated names given to `_embed` or `_expand`, each checked against what this resource has.
    func relationNames(_ parameter: String, allowed: Set<String>) throws -> Set<String> {
        var names: Set<String> = []
        for item in query where item.name == parameter {
            for name in item.value.split(separator: ",").map(String.init) {
                guard allowed.contains(name) else {
                    throw APIError.malformedQuery(
                        "\(parameter)=\(name) is not available here; it takes \(allowed.sorted().joined(separator: ", "))"
                    )
                }
                names.insert(name)
            }
        }
        return names
    }
}
