import BudgetCore
import Postgres

/// A `ListQuery` checked against a `FieldCatalog` and turned into SQL pieces with bound parameters.
///
/// Field names never become SQL text: typed fields come from the catalog's allow-list, generic ones are bound
/// text[] paths. `selectRows` assembles the statement that reads a list whole, `selectHeader` and
/// `selectCursorRows` the two that read it through a cursor; callers with other needs use the pieces.
struct ListPlan: Sendable {
    /// A boolean SQL expression; `TRUE` when nothing is filtered.
    var condition: Query
    /// The `_sort` keys as SQL, most significant first; empty means the caller's default order alone.
    var sortItems: [SortItem]
    /// How many records to answer; nil means all.
    var limit: Int?
    /// How many matching records to skip; for the 1.x envelope this is the requested page's offset, before
    /// clamping to the last page (`offset(total:)` and `selectRows` clamp it, `ListResponse.envelope` the same way).
    var offset: Int
    /// Regular expressions or substring search are present: run under a short statement timeout (docs/operations.md, Limits).
    var usesPatterns: Bool
    /// What the answer must carry besides the records: X-Total-Count, Link, or the envelope.
    var pagination: Pagination

    /// - Parameter maxRows: `--max-rows`, the most records any list answers (docs/configuration.md). A page
    ///   (`_page`, `_per_page`) larger than that shrinks to it, so its links and the envelope's numbers count
    ///   pages of that size; a list without pagination becomes the slice `_start=0` of that many records, and a
    ///   slice is cut to it, both with `X-Total-Count` and, when cut, a `Link` to the rest (`ListResponse.headers`).
    init(_ query: ListQuery, catalog: some FieldCatalog, maxRows: Int? = nil) throws {
        var usesPatterns = false
        var condition = try Self.sql(for: query.filter, catalog: catalog, usesPatterns: &usesPatterns)
        if let search = query.search {
            usesPatterns = true
            // json-server 0.17's q is a case-insensitive substring; % and _ in it are plain characters.
            let pattern = "%" + LikePattern.escaped(search) + "%"
            let tests = catalog.searchableFields.map { reference -> Query in
                switch reference {
                case .column(let sql, _): return ColumnConditions.search(sql: sql, pattern: pattern)
                case .document(let column, let path): return DocumentConditions.search(column: column, path: path, pattern: pattern)
                }
            }
            let searchCondition: Query = tests.isEmpty ? "FALSE" : "(" + Query.joined(tests, separator: " OR ") + ")"
            condition = query.filter == .all([]) ? searchCondition : "\(condition) AND \(searchCondition)"
        }
        self.condition = condition
        self.usesPatterns = usesPatterns
        sortItems = try query.sort.map { key -> SortItem in
            let expression: Query =
                switch try catalog.field(key.path) {
                case .column(let sql, _): sql
                // jsonb ordering compares numbers numerically and strings as text, so views=9 sorts before views=10.
                case .document(let column, let path): "(\(column) #> \(path)::text[])"
                }
            return SortItem(expression: expression, isDescending: key.isDescending)
        }
        pagination = query.pagination
        if let maxRows {
            switch pagination {
            case .none: pagination = .slice(start: 0, end: nil)
            case .slice: break
            case .page(let number, let size): pagination = .page(number: number, size: min(size, maxRows))
            case .envelope(let page, let perPage): pagination = .envelope(page: page, perPage: min(perPage, maxRows))
            }
        }
        switch pagination {
        case .none: (limit, offset) = (nil, 0)
        case .slice(let start, let end): (limit, offset) = (end.map { $0 - start }, start)
        case .page(let number, let size): (limit, offset) = (size, (number - 1) * size)
        case .envelope(let page, let perPage): (limit, offset) = (perPage, (page - 1) * perPage)
        }
        if let maxRows { limit = min(limit ?? maxRows, maxRows) }
    }

    /// ORDER BY items for `_sort`; nil means the caller's default order alone.
    var ordering: Query? {
        sortItems.isEmpty ? nil : Query.joined(sortItems.map { $0.expression + $0.direction }, separator: ", ")
    }

    private static func sql(for filter: Filter, catalog: some FieldCatalog, usesPatterns: inout Bool) throws -> Query {
        switch filter {
        case .all(let parts), .any(let parts):
            let isAll = if case .all = filter { true } else { false }
            if parts.isEmpty { return isAll ? "TRUE" : "FALSE" }
            let sqlParts = try parts.map { try sql(for: $0, catalog: catalog, usesPatterns: &usesPatterns) }
            if sqlParts.count == 1 { return sqlParts[0] }
            return "(" + Query.joined(sqlParts, separator: isAll ? " AND " : " OR ") + ")"
        case .comparison(let comparison):
            if comparison.op == .like { usesPatterns = true }
            switch try catalog.field(comparison.path) {
            case .column(let sql, let type):
                return try ColumnConditions.condition(
                    sql: sql, type: type, field: comparison.path.joined(separator: "."), op: comparison.op, value: comparison.value)
            case .document(let column, let path):
                let presence = comparison.isIgnoredForUnknownField ? catalog.presence(of: comparison.path) : nil
                return DocumentConditions.condition(column: column, path: path, op: comparison.op, value: comparison.value, presence: presence)
            }
        }
    }
}

/// One `_sort` key as SQL: the expression to order by and its direction.
struct SortItem: Sendable {
    var expression: Query
    var isDescending: Bool

    /// Records without the field go last either way, as they carry no value to place.
    var direction: Query { isDescending ? " DESC NULLS LAST" : " ASC NULLS LAST" }
}
