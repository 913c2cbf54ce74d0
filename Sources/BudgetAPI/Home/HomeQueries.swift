import BudgetCore
import Postgres

/// The SQL behind the home page: everything it shows, in one statement and so one snapshot.
enum HomeQueries {
    /// The most categories the page draws a bar for; past them it links to `/categories`, so a large
    /// budget keeps the page small.
    static let budgetLimit = 100

    /// One row per resource, then one per category with its figures this month, in the order the page shows
    /// them.
    ///
    /// Columns: kind (`typed`, `plural`, `singular`, `category`), name or title, record count (resources),
    /// category id, budgeted, carried, spent, remaining (categories), and on every row the current month
    /// (`YYYY-MM`, in the server's time zone); sections order typed resources, then generic collections as
    /// they were defined, then categories by id. A collection's count can read the documents'
    /// `(collection, position)` index; a category's figures are those of `GET /categories?month=current`.
    static func page(clock: CivilClock, ledger: LedgerID) -> Query {
        """
        SELECT kind, name, records, id, budgeted, carried, spent, remaining, to_char(\(clock.currentMonth), 'YYYY-MM') FROM (
            \(Query.joined(typedCounts(ledger), separator: " UNION ALL "))
            UNION ALL
            SELECT 1, row_number() OVER (ORDER BY k.created_at, k.name), k.kind, k.name,
                   (SELECT count(*) FROM documents d WHERE d.ledger_id = k.ledger_id AND d.collection = k.name),
                   NULL, NULL, NULL, NULL, NULL
            FROM collections k
            WHERE k.ledger_id = \(ledger)
            UNION ALL
            (SELECT 2, c.id, 'category', c.title, NULL, c.id, f.budgeted, f.carried, f.spent, f.remaining
             FROM \(CategoryQueries.source(month: clock.currentMonth)) WHERE \(Categories.inLedger(ledger))
             ORDER BY c.id LIMIT \(budgetLimit))
        ) page
        ORDER BY section, position
        """
    }

    /// A row per typed resource, in `TypedResources.all` order, with its record count.
    private static func typedCounts(_ ledger: LedgerID) -> [Query] {
        TypedResources.all.enumerated().map { index, resource in typedCount(resource, at: index, in: ledger) }
    }

    private static func typedCount(_ resource: any TypedResource.Type, at index: Int, in ledger: LedgerID) -> Query {
        """
        SELECT 0 AS section, \(Int64(index))::bigint AS position, 'typed' AS kind, \(resource.collection)::text AS name,
               (SELECT count(*) FROM \(resource.table) WHERE \(resource.inLedger(ledger))) AS records,
               NULL::bigint AS id, NULL::numeric AS budgeted, NULL::numeric AS carried, NULL::numeric AS spent,
               NULL::numeric AS remaining
        """
    }

    /// The page's contents from the rows of `page`.
    static func decode(_ result: QueryResult) throws -> HomePage {
        var page = HomePage()
        if result.count > 0 { page.month = try result[0].decode(String.self, at: 8) }
        for row in result {
            let kind = try row.decode(String.self, at: 0)
            let name = try row.decode(String.self, at: 1)
            if kind == "category" {
                page.budgets.append(
                    HomePage.Budget(
                        id: try row.decode(Int64.self, at: 3),
                        title: name,
                        budgeted: try row.decode(Money.self, at: 4),
                        carried: try row.decode(Money.self, at: 5),
                        spent: try row.decode(Money.self, at: 6),
                        remaining: try row.decode(Money.self, at: 7)
                    ))
            } else {
                let records = try row.decode(Int64.self, at: 2)
                let resourceKind: HomePage.Resource.Kind =
                    switch kind {
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
