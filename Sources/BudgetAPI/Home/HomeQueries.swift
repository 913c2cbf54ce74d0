import Postgres

/// The SQL behind the home page: everything it shows, in one statement and so one snapshot.
enum HomeQueries {
    /// The most categories the page draws a bar for; past them it links to `/categories`, so a large
    /// budget keeps the page small.
    static let budgetLimit = 100

    /// One row per resource, then one per category with its balance, in the order the page shows them.
    ///
    /// Columns: kind (`typed`, `plural`, `singular`, `category`), name or title, record count (resources),
    /// category id, amount, spent, remaining (categories); sections order typed resources, then generic
    /// collections as they were defined, then categories by id. A collection's count can read the
    /// documents' `(collection, position)` index, a category's `spent` the transactions'
    /// `(category_id, id)` one: it is the same lateral sum as the category's JSON.
    static let page: Query = """
        SELECT kind, name, records, id, amount, spent, remaining FROM (
            \(Query.joined(typedCounts, separator: " UNION ALL "))
            UNION ALL
            SELECT 1, row_number() OVER (ORDER BY k.created_at, k.name), k.kind, k.name,
                   (SELECT count(*) FROM documents d WHERE d.collection = k.name), NULL, NULL, NULL, NULL
            FROM collections k
            UNION ALL
            (SELECT 2, c.id, 'category', c.title, NULL, c.id, c.amount, b.spent, c.amount - b.spent
             FROM \(CategoryQueries.source) ORDER BY c.id LIMIT \(budgetLimit))
        ) page
        ORDER BY section, position
        """

    /// A row per typed resource, in `TypedResources.all` order, with its record count.
    private static let typedCounts: [Query] = TypedResources.all.enumerated().map { index, resource in
        """
        SELECT 0 AS section, \(Int64(index))::bigint AS position, 'typed' AS kind, \(resource.collection)::text AS name,
               (SELECT count(*) FROM \(resource.table)) AS records,
               NULL::bigint AS id, NULL::numeric AS amount, NULL::numeric AS spent, NULL::numeric AS remaining
        """
    }

    /// The page's contents from the rows of `page`.
    static func decode(_ result: QueryResult) throws -> HomePage {
        var page = HomePage()
        for row in result {
            let kind = try row.decode(String.self, at: 0)
            let name = try row.decode(String.self, at: 1)
            if kind == "category" {
                page.budgets.append(HomePage.Budget(
                    id: try row.decode(Int64.self, at: 3),
                    title: name,
                    amount: try row.decode(Numeric.self, at: 4),
                    spent: try row.decode(Numeric.self, at: 5),
                    remaining: try row.decode(Numeric.self, at: 6)
                ))
            } else {
                let records = try row.decode(Int64.self, at: 2)
                let resourceKind: HomePage.Resource.Kind = switch kind {
                case "typed": .typed
                case "singular": .singular
                default: .plural
                }
                page.resources.append(HomePage.Resource(name: name, kind: resourceKind, records: records))
            }
        }
        return page
    }
}
