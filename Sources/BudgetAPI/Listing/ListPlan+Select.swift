import Postgres

extension ListPlan {
    /// The page as plain rows, for Swift to render, in one statement: one row per record, in order, each
    /// starting with the header columns (the number of matching records, bigint, 0 when no pagination asked for
    /// it; the change feed position of the same snapshot, bigint, for `X-Sync-Seq`; `ownerExists`, boolean,
    /// whether a nested list's parent exists, so a 404 costs no extra round trip), then `columns`, then the
    /// sort keys. An empty page answers one row whose record columns are NULL, so the header still arrives.
    ///
    /// The header is a MATERIALIZED CTE so that the count and the owner check run once, whatever the planner
    /// makes of the join. The rows are sorted again outside the join: PostgreSQL promises no order otherwise.
    ///
    /// - Parameters:
    ///   - limit: the most rows to answer, when fewer than the plan's (`ListAnswer`'s probe of a typed list).
    ///   - version: an expression for one more header column after `ownerExists`, e.g. the data version a weak
    ///     `ETag` is made of (`ChangeFeedQueries.dataVersion`); the record columns then start one later.
    func selectRows(
        columns: Query, from source: Query, scope: Query, tieBreak: Query, ledger: LedgerID, ownerExists: Query = "TRUE",
        limit: Int? = nil, version: Query? = nil
    ) -> Query {
        let page = PageParts(self, from: source, scope: scope, tieBreak: tieBreak, limit: limit.map { min($0, self.limit ?? $0) } ?? self.limit)
        let versionColumn: Query = version.map { ", \($0) AS version" } ?? ""
        let selectedVersion: Query = version == nil ? "" : ", matched.version"
        return """
            WITH matched AS MATERIALIZED (\
            SELECT total, \(ChangeFeedQueries.position(ledger)) AS position, \(ownerExists) AS owner_exists\(versionColumn) FROM (\(page.counting)) counted) \
            SELECT matched.total, matched.position, matched.owner_exists\(selectedVersion), page.* FROM matched \
            LEFT JOIN LATERAL (SELECT \(columns)\(page.rows)) page ON true ORDER BY \(page.order("page."))
            """
    }

    /// The page as plain rows in one level, for a list without the envelope: `header` (scalar subqueries, which
    /// PostgreSQL runs once, before the first row, as InitPlans), then `columns`, in order; no sort key columns.
    /// An empty page answers no row at all, and so no header: the caller then asks `selectRows`, which answers
    /// one. Without the join, the second sort and the materialized header of `selectRows`, PostgreSQL spends
    /// about a third less on a page (bench/README.md, The list).
    func selectPage(columns: Query, from source: Query, scope: Query, tieBreak: Query, header: [Query], limit: Int? = nil) -> Query {
        precondition(!isEnvelope, "the envelope's OFFSET needs the total: selectRows")
        let page = PageParts(self, from: source, scope: scope, tieBreak: tieBreak, limit: limit.map { min($0, self.limit ?? $0) } ?? self.limit)
        let selected = header.isEmpty ? columns : Query.joined(header, separator: ", ") + ", " + columns
        return "SELECT \(selected) \(page.plainRows)"
    }

    /// The number of matching records, as a scalar subquery for `selectPage`'s header (bigint).
    func totalColumn(from source: Query, scope: Query) -> Query {
        "(\(PageParts(self, from: source, scope: scope, tieBreak: "NULL", limit: nil).counting))"
    }

    /// Whether the page is the 1.x envelope, whose OFFSET is clamped by the total in SQL.
    var isEnvelope: Bool {
        if case .envelope = pagination { true } else { false }
    }

    /// The header of a list whose rows a cursor reads (`selectCursorRows`), in the same snapshot: one row of
    /// the number of matching records (bigint; 0 when no pagination asked for it), the change feed position
    /// (bigint), the data version of a weak `ETag` (`ChangeFeedQueries.dataVersion`, text) and `ownerExists`.
    func selectHeader(from source: Query, scope: Query, ledger: LedgerID, ownerExists: Query = "TRUE") -> Query {
        let counting = PageParts(self, from: source, scope: scope, tieBreak: "NULL", limit: limit).counting
        return """
            SELECT counted.total, \(ChangeFeedQueries.position(ledger)), \(ChangeFeedQueries.dataVersion(ledger)), \(ownerExists) \
            FROM (\(counting)) counted
            """
    }

    /// The page's rows alone, in order, for a cursor: `columns`, then the sort keys. `offset` replaces the plan's
    /// own, for the envelope's page clamped by the total the header counted (`offset(total:)`).
    ///
    /// No join and no ORDER BY outside the rows' own, so PostgreSQL can hand out the first rows before it has
    /// read the last (an index in the sort's order; a cursor's plan favours that).
    func selectCursorRows(columns: Query, from source: Query, scope: Query, tieBreak: Query, offset: Int) -> Query {
        let page = PageParts(self, from: source, scope: scope, tieBreak: tieBreak, limit: limit, offset: offset)
        return "SELECT \(columns)\(page.rows)"
    }

    /// How many matching records the page skips, given their `total`: the plan's offset, or for the envelope
    /// the requested page clamped into `1…pages` as json-server 1.x does (`ListResponse.envelope`).
    func offset(total: Int) -> Int {
        guard case .envelope(let page, let perPage) = pagination else { return offset }
        let size = max(1, perPage)
        let pages = max(1, (total + size - 1) / size)
        return (max(1, min(page, pages)) - 1) * size
    }
}

/// The pieces both list statements share: the count, and the page's rows with their sort keys as columns.
private struct PageParts {
    /// The subquery of the count, one row with `total` (bigint).
    let counting: Query
    /// What follows a page's select list: the sort key columns, FROM, WHERE, ORDER BY, LIMIT and OFFSET; the
    /// OFFSET of the envelope reads `matched.total`.
    let rows: Query
    /// What follows a one-level page's select list: FROM, WHERE, ORDER BY over the sort expressions themselves,
    /// LIMIT and OFFSET (the plan's; never the envelope's).
    let plainRows: Query
    private let keys: [(column: Query, direction: Query)]

    /// - Parameters:
    ///   - limit: the most rows; nil for all.
    ///   - offset: rows to skip, when known; nil takes the plan's (for the envelope, clamped in SQL by `matched.total`).
    init(_ plan: ListPlan, from source: Query, scope: Query, tieBreak: Query, limit: Int?, offset: Int? = nil) {
        let matching: Query = "FROM \(source) WHERE (\(scope)) AND \(plan.condition)"
        let limitClause: Query = limit.map { "LIMIT \($0)::bigint" } ?? "LIMIT ALL"
        let offsetClause: Query
        if let offset {
            offsetClause = "OFFSET \(offset)::bigint"
        } else if case .envelope(let page, let perPage) = plan.pagination {
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
        let expressions = plan.sortItems.map { $0.expression + $0.direction } + [tieBreak]
        plainRows = "\(matching) ORDER BY \(Query.joined(expressions, separator: ", ")) \(limitClause) \(offsetClause)"
    }

    /// The ORDER BY items over the key columns, each name prefixed, e.g. `page.sort_1 DESC NULLS LAST, page.sort_last`.
    func order(_ prefix: Query) -> Query {
        Self.order(keys, prefix: prefix)
    }

    private static func order(_ keys: [(column: Query, direction: Query)], prefix: Query) -> Query {
        Query.joined(keys.map { prefix + $0.column + $0.direction }, separator: ", ")
    }
}
