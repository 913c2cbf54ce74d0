import HTTPServer
import Postgres

/// A typed resource whose records name a category (`categoryId`): transactions and budgets. Their lists
/// and records take `_expand=category`, which nests the category as json-server's `_expand` does.
protocol CategoryChild: TypedResource {}

extension CategoryChild {
    /// The record's JSON with its category under `category`, rendered in SQL over a row `alias`.
    static var expandedJSON: Query {
        let category = CategoryQueries.jsonObject(where: "c.id = \(unsafeSQL: alias).category_id")
        return SQLFragments.jsonObject(columns: "\(shape.record.renderedColumns), \(category) AS category")
    }

    static func listSource(for request: Request, clock: CivilClock) throws -> ListSource {
        var source = plainSource
        if try expandsCategory(request) { source.element = .rendered(expandedJSON) }
        return source
    }

    static func find(id: Int64, for request: Request, clock: CivilClock) throws -> RecordRead {
        guard try expandsCategory(request) else { return .plain(find(id: id), shape.record) }
        return .rendered("SELECT \(expandedJSON) FROM \(table) WHERE \(idColumn) = \(id)")
    }

    private static func expandsCategory(_ request: Request) throws -> Bool {
        try request.relationNames("_expand", allowed: ["category"]).contains("category")
    }
}
