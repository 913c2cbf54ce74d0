/// What a list request asked for (docs/json-server.md, the query language), parsed from the query items;
/// field names are still unchecked text.
///
/// `ListQuery.parse` reads both json-server dialects into this one shape; `ListPlan` later checks the field
/// names against a `FieldCatalog` and turns the whole thing into SQL.
public struct ListQuery: Sendable, Equatable {
    /// Which records to answer; `.all([])` keeps every record.
    public var filter: Filter = .all([])
    /// The `q=` text: a case-insensitive substring looked for in every string and number of a record.
    public var search: String?
    /// `_sort`/`_order` (0.17) or `_sort=-field` (1.x), most significant first.
    public var sort: [SortKey] = []
    public var pagination: Pagination = .none
    /// `_embed` values (comma-separated or repeated), e.g. `comments` on /posts or `post` on /comments (1.x).
    public var embeds: [String] = []
    /// `_expand` values, e.g. `post` on /comments (0.17).
    public var expands: [String] = []
}

/// A boolean combination of field comparisons.
public indirect enum Filter: Sendable, Equatable {
    /// Every part must hold; an empty list holds for every record.
    case all([Filter])
    /// At least one part must hold; an empty list holds for none.
    case any([Filter])
    case comparison(Comparison)
}

/// One test of one field, e.g. `views >= 10` or `author.name ~* 'typi'`.
public struct Comparison: Sendable, Equatable {
    /// The field's path in the record: `author.name` is `["author", "name"]`, `tags[0]` is `["tags", "0"]`.
    public var path: [String]
    public var op: ComparisonOperator
    public var value: FilterValue
    /// json-server 0.17's plain `field=value` on a generic collection: when no record of the collection has the
    /// field, the parameter is ignored rather than matching nothing (docs/json-server.md, the query language).
    public var isIgnoredForUnknownField = false
}

/// The operators of both dialects; `in` is not here because parsing turns it into an `.any` of `.eq`.
public enum ComparisonOperator: String, Sendable, Equatable, CaseIterable {
    case eq, ne, lt, lte, gt, gte
    /// json-server 0.17's `_like`: a case-insensitive regular expression.
    case like
    /// json-server 1.x's case-insensitive substring tests.
    case contains, startsWith, endsWith

    /// Whether repeating the parameter means AND rather than OR.
    ///
    /// json-server 0.17 ORs repeated values of a parameter except `_ne`, which it ANDs
    /// (`id_ne=1&id_ne=2` excludes both); the 1.x operators follow the same rule.
    public var repeatsAsConjunction: Bool { self == .ne }
}

/// A value a field is compared with: query text (typed later by the field it meets) or JSON null from `_where`.
public enum FilterValue: Sendable, Equatable {
    case text(String)
    case null
}

/// One sort key: a field path and its direction.
public struct SortKey: Sendable, Equatable {
    public var path: [String]
    public var isDescending: Bool
}

/// How much of the matching list to answer, and in which shape.
public enum Pagination: Sendable, Equatable {
    /// Every matching record, as a plain array.
    case none
    /// `_start`/`_end`/`_limit` (0.17): records `start..<end` (to the end when `end` is nil), with `X-Total-Count`.
    case slice(start: Int, end: Int?)
    /// `_page` with `_limit` (0.17, default 10 a page): an array with `X-Total-Count` and `Link`.
    case page(number: Int, size: Int)
    /// `_per_page` (1.x): the envelope `{"first":…,"data":[…]}`; the page is clamped to the pages that exist.
    case envelope(page: Int, perPage: Int)

    /// json-server 0.17's page size when `_page` comes without `_limit`; also 1.x's `_per_page` default.
    public static let defaultPageSize = 10
}
