import Postgres

extension ListPlan {
    /// One statement answering one row: the number of matching records (bigint; 0 when no pagination asked for
    /// it), the requested page of them as a compact JSON array (text), in order, the change feed position
    /// of the same snapshot (bigint, for `X-Sync-Seq`), and `ownerExists` (boolean).
    ///
    /// - Parameters:
    ///   - element: SQL for one record's JSON over the source's alias, e.g. `d.body`; bound values welcome
    ///     (generic `_embed` binds collection and member names here). PostgreSQL evaluates it for the rows up to
    ///     the page's end (the skipped offset included), never for the count.
    ///   - source: the FROM list, e.g. `documents d` (program text only).
    ///   - scope: which rows belong to the list at all, e.g. `d.collection = \(name)`; bound values welcome.
    ///   - tieBreak: the default order, one expression appended after the `_sort` keys, e.g. `d.position`.
    ///   - ownerExists: for a nested list, whether its parent record exists, e.g. `EXISTS (SELECT 1 FROM categories
    ///     WHERE id = 7)`; answered by the same statement, so a 404 costs no extra round trip.
    func selectPage(element: Query, from source: Query, scope: Query, tieBreak: Query, ownerExists: Query = "TRUE") -> Query {
        let page = PageParts(self, from: source, scope: scope, tieBreak: tieBreak)
        // The sort keys leave the subquery as columns, so string_agg can order by them again rather than rely on
        // row arrival order. A window function (row_number) would sit between LIMIT and the sort and cost the
        // bounded top-N sort: `_sort=views&_limit=10` on 100k records went from a heap of 10 to a sort on disk.
        return """
            SELECT matched.total, (SELECT coalesce('[' || string_agg(page.element::text, ',' ORDER BY \(page.order("page."))) \
            || ']', '[]') FROM (SELECT \(element) AS element\(page.rows)) page), \(ChangeFeedQueries.position), \(ownerExists) \
            FROM (\(page.counting)) matched
            """
    }

    /// The page as plain rows, for Swift to render: one row per record, in order, each starting with the
    /// header columns of `selectPage` (total, change feed position, `ownerExists`), then `columns`, then the
    /// sort keys. An empty page answers one row whose record columns are NULL, so the header still arrives.
    ///
    /// The header is a MATERIALIZED CTE so that the count and the owner check run once, whatever the planner
    /// makes of the join. The rows are sorted again outside the join: PostgreSQL promises no order otherwise.
    func selectRows(columns: Query, from source: Query, scope: Query, tieBreak: Query, ownerExists: Query = "TRUE") -> Query {
        let page = PageParts(self, from: source, scope: scope, tieBreak: tieBreak)
        return """
            WITH matched AS MATERIALIZED (\
            SELECT total, \(ChangeFeedQueries.position) AS position, \(ownerExists) AS owner_exists FROM (\(page.counting)) counted) \
            SELECT matched.total, matched.position, matched.owner_exists, page.* FROM matched \
            LEFT JOIN LATERAL (SELECT \(columns)\(page.rows)) page ON true ORDER BY \(page.order("page."))
            """
    }
}

/// The pieces both list statements share: the count, and the page's rows with their sort keys as columns.
private struct PageParts {
    /// The subquery of the count, one row with `total` (bigint).
    let counting: Query
    /// What follows a page's select list: the sort key columns, FROM, WHERE, ORDER BY, LIMIT and OFFSET; the
    /// OFFSET of the envelope reads `matched.total`.
    let rows: Query
    private let keys: [(column: Query, direction: Query)]

    init(_ plan: ListPlan, from source: Query, scope: Query, tieBreak: Query) {
        let matching: Query = "FROM \(source) WHERE (\(scope)) AND \(plan.condition)"
        let limitClause: Query = plan.limit.map { "LIMIT \($0)::bigint" } ?? "LIMIT ALL"
        let offsetClause: Query
        if case .envelope(let page, let perPage) = plan.pagination {
            // json-server 1.x clamps the page into 1…pages, where pages = max(1, ceil(items / perPage)).
            offsetClause = """
                OFFSET (least(\(page)::bigint, greatest(1, (matched.total + \(perPage)::bigint - 1) / \(perPage)::bigint)) - 1) \
                * \(perPage)::bigint
                """
        } else {
            offsetClause = "OFFSET \(plan.offset)::bigint"
        }
        // Only pagination reports a total (X-Total-Count, the envelope); a plain list skips the second scan.
        counting = plan.pagination == .none ? "SELECT 0::bigint AS total" : "SELECT count(*) AS total \(matching)"
        let sortKeys = plan.sortItems.enumerated().map { index, item in (column: Query(identifier: "sort_\(index + 1)"), item: item) }
        keys = sortKeys.map { ($0.column, $0.item.direction) } + [("sort_last", "")]
        let keyColumns = sortKeys.map { ", \($0.item.expression) AS \($0.column)" as Query }
        rows = """
            \(Query.joined(keyColumns, separator: "")), \(tieBreak) AS sort_last \
            \(matching) ORDER BY \(Self.order(keys, prefix: "")) \(limitClause) \(offsetClause)
            """
    }

    /// The ORDER BY items over the key columns, each name prefixed, e.g. `page.sort_1 DESC NULLS LAST, page.sort_last`.
    func order(_ prefix: Query) -> Query {
        Self.order(keys, prefix: prefix)
    }

    private static func order(_ keys: [(column: Query, direction: Query)], prefix: Query) -> Query {
        Query.joined(keys.map { prefix + $0.column + $0.direction }, separator: ", ")
    }
}
