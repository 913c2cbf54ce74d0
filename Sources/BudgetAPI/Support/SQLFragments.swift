import BudgetCore
import Postgres

/// SQL pieces shared by the resources' queries: how a timestamp and a record render as JSON.
enum SQLFragments {
    /// ISO 8601 in UTC in whole seconds with `Z` (`2026-11-21T08:00:00Z`), which every default ISO 8601
    /// decoder reads (docs/api.md); `SS` cuts the fraction, it does not round.
    static func timestamp(_ column: Query) -> Query {
        "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
    }

    /// A JSON object with one member per column of `columns` (a select list with camelCase aliases).
    ///
    /// `row_to_json` writes compact JSON (`{"id":1}`), where `json_build_object` would pad every colon.
    static func jsonObject(columns: Query) -> Query {
        "(SELECT row_to_json(r) FROM (SELECT \(columns)) r)"
    }

    /// An aggregate: the compact JSON array of `element` over the group's rows, `[]` when there are none.
    ///
    /// `json_agg` would separate elements with ", " and line breaks; the bytes go to clients as they are.
    static func jsonArray(of element: Query, orderBy: Query) -> Query {
        "coalesce('[' || string_agg((\(element))::text, ',' ORDER BY \(orderBy)) || ']', '[]')"
    }
}

extension Money: PostgresEncodable, PostgresDecodable {
    public var postgresText: String { description }

    /// A `numeric` as PostgreSQL writes it (`400.00`, `-0.01`), read exactly; more than two significant decimals
    /// or more than twelve digits before the point throw.
    public init(postgresText: String) throws { self = try Money(parsing: postgresText) }
}
