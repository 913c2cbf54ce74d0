import Postgres

extension ListPlan {
    /// One statement answering one row: the number of matching records (bigint) and the requested page of them
    /// as a compact JSON array (text), in order.
    ///
    /// - Parameters:
    ///   - element: SQL for one record's JSON over the source's alias, e.g. `d.body` (program text only).
    ///   - source: the FROM list, e.g. `documents d` (program text only).
    ///   - scope: which rows belong to the list at all, e.g. `d.collection = \(name)`; bound values welcome.
    ///   - tieBreak: the default order, appended after the `_sort` keys, e.g. `d.position`.
    func selectPage(element: String, from source: String, scope: Query, tieBreak: String) -> Query {
        let matching: Query = "FROM \(unsafeSQL: source) WHERE (\(scope)) AND \(condition)"
        let order = orderBy(tieBreak: tieBreak)
        let limitClause: Query = limit.map { "LIMIT \($0)::bigint" } ?? "LIMIT ALL"
        let offsetClause: Query
        if case .envelope(let page, let perPage) = pagination {
            // json-server 1.x clamps the page into 1…pages, where pages = max(1, ceil(items / perPage)).
            offsetClause = """
                OFFSET (least(\(page)::bigint, greatest(1, (matched.total + \(perPage)::bigint - 1) / \(perPage)::bigint)) - 1) \
                * \(perPage)::bigint
                """
        } else {
            offsetClause = "OFFSET \(offset)::bigint"
        }
        // row_number() carries the order out of the subquery, since string_agg must not rely on row arrival order.
        return """
            SELECT matched.total, (SELECT coalesce('[' || string_agg(page.element::text, ',' ORDER BY page.rank) || ']', '[]') \
            FROM (SELECT \(unsafeSQL: element) AS element, row_number() OVER (ORDER BY \(order)) AS rank \
            \(matching) ORDER BY \(order) \(limitClause) \(offsetClause)) page) \
            FROM (SELECT count(*) AS total \(matching)) matched
            """
    }
}
