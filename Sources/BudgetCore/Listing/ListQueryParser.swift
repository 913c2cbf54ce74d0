extension ListQuery {
    /// Reads the query items of a list request in either json-server dialect; throws `MalformedQuery` (a 400 in BudgetAPI).
    ///
    /// Parameters that start with `_` and are not part of the list language (`_delay`, jQuery's cache-buster `_`)
    /// are ignored, as json-server ignores what it does not know; other servers' middleware handles them. So is
    /// JSONP's `callback`, which never filters (we answer JSON, not JSONP: docs/json-server.md, where we differ).
    public static func parse(_ items: [(name: String, value: String)]) throws -> ListQuery {
        var query = ListQuery()
        var groups: [(key: String, comparisons: [Comparison])] = []
        var whereFilter: Filter?
        var first: [String: String] = [:]
        for (name, value) in items {
            switch name {
            case "_embed": query.embeds += listValues(value)
            case "_expand": query.expands += listValues(value)
            case "_where":
                // A repeated `_where` would be ambiguous; the first one counts, like every other single-valued parameter.
                if whereFilter == nil { whereFilter = try WhereClause.filter(json: value) }
            case "q", "_sort", "_order", "_page", "_limit", "_per_page", "_start", "_end":
                if first[name] == nil { first[name] = value }
            case _ where name.hasPrefix("_") || name == "callback":
                continue
            default:
                let parsed = try FieldKey(name)
                let comparisons = try parsed.comparisons(value: value)
                if let index = groups.firstIndex(where: { $0.key == name }) {
                    groups[index].comparisons += comparisons
                } else {
                    groups.append((name, comparisons))
                }
            }
        }
        var parts = groups.map { group -> Filter in
            let filters = group.comparisons.map(Filter.comparison)
            if filters.count == 1 { return filters[0] }
            return group.comparisons[0].op.repeatsAsConjunction ? .all(filters) : .any(filters)
        }
        if let whereFilter { parts.append(whereFilter) }
        query.filter = parts.count == 1 ? parts[0] : .all(parts)
        if let search = first["q"], !search.isEmpty { query.search = search }
        query.sort = try sortKeys(sort: first["_sort"], order: first["_order"])
        query.pagination = try pagination(first)
        return query
    }

    /// `a,b` and repeated parameters alike give a list, without empty entries.
    private static func listValues(_ value: String) -> [String] {
        value.split(separator: ",").map { String($0) }.filter { !$0.isEmpty }
    }

    /// `_sort=a,-b` with optional `_order=asc,desc`: 0.17 pairs the lists by position, 1.x marks descending with `-`.
    private static func sortKeys(sort: String?, order: String?) throws -> [SortKey] {
        // `_order` is checked without `_sort` too: a word other than asc or desc is a 400 (openapi.yaml), not ignored.
        let orders = try (order ?? "").split(separator: ",", omittingEmptySubsequences: false).map { text -> Bool? in
            switch text.lowercased() {
            case "": return nil
            case "asc": return false
            case "desc": return true
            default: throw MalformedQuery("_order takes asc or desc for each _sort field; '\(text)' is neither")
            }
        }
        guard let sort else { return [] }
        return try sort.split(separator: ",", omittingEmptySubsequences: false).enumerated().compactMap { index, raw in
            let isMinus = raw.hasPrefix("-")
            let name = isMinus ? String(raw.dropFirst()) : String(raw)
            guard !name.isEmpty else { return nil }
            let explicit = index < orders.count ? orders[index] : nil
            return SortKey(path: try FieldKey.path(name, parameter: "_sort"), isDescending: explicit ?? isMinus)
        }
    }

    /// Chooses the pagination form: `_per_page` (1.x envelope) wins, then `_page` (0.17), then `_start`/`_end`/`_limit`.
    private static func pagination(_ values: [String: String]) throws -> Pagination {
        func count(_ name: String) throws -> Int? {
            guard let text = values[name] else { return nil }
            // Deliberately stricter than json-server's parseInt: `_page=abc` is a 400, not page 1
            // (docs/json-server.md, where we differ).
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                throw MalformedQuery("\(name) must be a whole number of 0 or more; it was '\(text)'")
            }
            guard let number = Int(text), number <= maximumCount else {
                throw MalformedQuery("\(name) must be at most \(maximumCount); it was \(text)")
            }
            return number
        }
        let page = try count("_page"), limit = try count("_limit"), perPage = try count("_per_page")
        let start = try count("_start"), end = try count("_end")
        if let perPage {
            // json-server 1.x: a page size below 1 counts as 1; the page itself is clamped once the total is known.
            return .envelope(page: max(1, page ?? 1), perPage: max(1, perPage))
        }
        if let page {
            // json-server 0.17: `_page` below 1 is page 1, and `_limit` missing or 0 means 10.
            let size = limit.flatMap { $0 > 0 ? $0 : nil } ?? Pagination.defaultPageSize
            return .page(number: max(1, page), size: size)
        }
        if let end { return .slice(start: start ?? 0, end: max(end, start ?? 0)) }
        if let limit { return .slice(start: start ?? 0, end: (start ?? 0) + limit) }
        if let start { return .slice(start: start, end: nil) }
        return .none
    }

    /// Bounds every count so that page × size and start + limit cannot overflow.
    public static let maximumCount = 1_000_000_000
}
