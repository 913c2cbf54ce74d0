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
            where: "c.ledger_id = \(unsafeSQL: alias).ledger_id AND c.id = \(unsafeSQL: alias).category_id")
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

/// `/categories/:id/<children>`: one category's records of a `CategoryChild`, through the query language, and
/// creating them under it (docs/api.md); a category that does not exist is a 404 of the path.
struct CategoryChildRoutes<Child: CategoryChild>: Sendable {
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        let path = "/categories/:id/\(Child.collection)"
        router.get(path) { request, database in try await list(request, database: database) }
        router.post(path) { request, database in try await create(request, database: database) }
    }

    func list(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        let list = try Child.listAnswer(
            for: request, context: RecordContext(clock: clock, ledger: database.ledger), maxRows: database.streams.maxRows)
        return try await database.list(
            list.answer, from: list.source,
            scope: "\(unsafeSQL: Child.alias).category_id = \(categoryID)",
            owner: ListOwner(exists: CategoryQueries.exists(id: categoryID, in: database.ledger), missing: APIError.notFound(resource: Categories.recordName, id: categoryID)))
    }

    /// The path names the category, so the body need not.
    func create(_ request: Request, database: Database) async throws -> Response {
        let categoryID = try recordID(request)
        return try await Self.missingCategoryIsNotFound(categoryID) {
            try await RecordRoutes<Child>(clock: clock).create(request, database: database) { members, prefix in
                try Child.fields(from: members, categoryIDFromPath: categoryID, fieldPrefix: prefix)
            }
        }
    }

    /// Runs a write that names the path's category; its foreign key (`<table>_category_id_fkey`, as the
    /// migrations name it) failing means the path's category does not exist.
    static func missingCategoryIsNotFound(_ categoryID: Int64, _ write: () async throws -> Response) async throws -> Response {
        do {
            return try await write()
        } catch let error as PostgresError where error.constraint == "\(Child.collection)_category_id_fkey" {
            throw APIError.notFound(resource: Categories.recordName, id: categoryID)
        }
    }
}
