import BudgetCore
import HTTPServer
import Postgres

/// A typed resource whose records name a category (`categoryId`): transactions and budgets. Their lists
/// and records take `_expand=category`, which nests the category as json-server's `_expand` does, and
/// they are listed and created under their category too (`CategoryChildRoutes`).
protocol CategoryChild: TypedResource {
    /// Validates a body posted under `/categories/:id/…`, whose path names the category.
    static func fields(from members: JSONObject, categoryIDFromPath: Int64, fieldPrefix: String) throws -> Fields
}

extension CategoryChild {
    /// The record's JSON with its category under `category`, rendered in SQL over a row `alias`.
    static var expandedJSON: Query {
        let category = CategoryQueries.jsonObject(
            where: "c.ledger_id = \(alias).ledger_id AND c.id = \(alias).category_id")
        return SQLFragments.jsonObject(columns: "\(shape.record.renderedColumns), \(category) AS category")
    }

    static func listSource(for request: Request, context: RecordContext) throws -> ListSource {
        var source = plainSource(in: context.ledger)
        if try expandsCategory(request) { source.element = .rendered(expandedJSON) }
        return source
    }

    static func find(id: Int64, for request: Request, context: RecordContext) throws -> RecordRead {
        guard try expandsCategory(request) else { return .plain(find(id: id, in: context.ledger), shape.record) }
        return .rendered("SELECT \(expandedJSON) FROM \(table) WHERE \(inLedger(context.ledger)) AND \(idColumn) = \(id)")
    }

    private static func expandsCategory(_ request: Request) throws -> Bool {
        try request.relationNames("_expand", allowed: ["category"]).contains("category")
    }
}

/// `/categories/:id/<children>`: one category's records of a `CategoryChild` (`OwnedRecordRoutes`).
struct CategoryChildRoutes<Child: CategoryChild>: Sendable {
    let clock: CivilClock

    /// The category of a nested path, which the children name by their foreign key to categories.
    static var owner: RecordOwner {
        // A split has no category (the shape rule transactions_split_shape, migrations/0020), so none of a
        // category's transactions has parts.
        RecordOwner(Categories.self, of: Child.self, nullMembers: ["splits"]) { id, ledger in CategoryQueries.exists(id: id, in: ledger) }
    }

    /// `/categories/:id/<children>`.
    var routes: OwnedRecordRoutes<Child> {
        OwnedRecordRoutes<Child>(owner: Self.owner, clock: clock) { members, categoryID, prefix in
            try Child.fields(from: members, categoryIDFromPath: categoryID, fieldPrefix: prefix)
        }
    }

    func register(in router: inout Router<Database>) {
        routes.register(in: &router)
    }

    /// Runs a write that names the path's category; its foreign key failing means the category does not exist.
    static func missingCategoryIsNotFound(_ categoryID: Int64, _ write: () async throws -> Response) async throws -> Response {
        try await OwnedRecordRoutes<Child>.missingOwnerIsNotFound(owner, categoryID, write)
    }
}
