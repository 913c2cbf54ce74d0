@testable import BudgetCore
@testable import BudgetAPI
import HTTPServer
import Testing

/// Query items of a request target, decoded as the HTTP server decodes them.
func listItems(_ query: String) -> [(name: String, value: String)] {
    Request(method: .get, target: "/posts?" + query).query
}

func parseList(_ query: String) throws -> ListQuery {
    try ListQuery.parse(listItems(query))
}

/// json-server 0.17's plain `field=value`, ignored on a generic collection when no record has the field.
private func eq(_ path: String, _ value: String) -> Filter {
    .comparison(Comparison(path: path.split(separator: ".").map(String.init), op: .eq, value: .text(value), isIgnoredForUnknownField: true))
}

private func compare(_ path: String, _ op: ComparisonOperator, _ value: String) -> Filter {
    .comparison(Comparison(path: path.split(separator: ".").map(String.init), op: op, value: .text(value)))
}

@Suite struct ListingParseTests {
    static let filterTable: [(query: String, filter: Filter)] = [
        ("", .all([])),
        ("title=json-server", eq("title", "json-server")),
        ("id=1&id=2", .any([eq("id", "1"), eq("id", "2")])),
        ("author.name=typicode", eq("author.name", "typicode")),
        ("tags[0]=a", eq("tags.0", "a")),
        ("views_gte=10&views_lte=20", .all([compare("views", .gte, "10"), compare("views", .lte, "20")])),
        ("id_ne=1&id_ne=2", .all([compare("id", .ne, "1"), compare("id", .ne, "2")])),
        ("title_like=^serv", compare("title", .like, "^serv")),
        ("views:gt=100", compare("views", .gt, "100")),
        ("views_lt=5", compare("views", .lt, "5")),
        ("title:=x", compare("title", .eq, "x")),
        ("id:in=1,2", .any([compare("id", .eq, "1"), compare("id", .eq, "2")])),
        ("id_in=3", compare("id", .eq, "3")),
        (
            "title:contains=Ab&title:startsWith=a&title_endsWith=z",
            .all([compare("title", .contains, "Ab"), compare("title", .startsWith, "a"), compare("title", .endsWith, "z")])
        ),
        ("created_at=2024-01-01&first_name=Ann", .all([eq("created_at", "2024-01-01"), eq("first_name", "Ann")])),
        ("_delay=300&_=123&_unknown=1&title=a", eq("title", "a")),
        ("callback=cb&_=1&title=a", eq("title", "a")),
        ("q=hello&title=a%20b", eq("title", "a b")),
    ]

    @Test(arguments: filterTable)
    func filtersParse(_ row: (query: String, filter: Filter)) throws {
        #expect(try parseList(row.query).filter == row.filter)
    }

    @Test func whereJSONBecomesAFilter() throws {
        let query = try parseList(#"_where={"or":[{"views":{"gt":100}},{"author":{"name":{"lt":"m","ne":"k"}}}],"id":{"in":[1,"2"]}}"#)
        #expect(
            query.filter
                == .all([
                    .any([compare("views", .gt, "100"), .all([compare("author.name", .lt, "m"), compare("author.name", .ne, "k")])]),
                    .any([compare("id", .eq, "1"), compare("id", .eq, "2")]),
                ]))
        let nullCheck = try parseList(#"_where={"deletedAt":{"eq":null}}"#)
        #expect(nullCheck.filter == .comparison(Comparison(path: ["deletedAt"], op: .eq, value: .null)))
    }

    @Test func searchSortEmbedsAndExpands() throws {
        let query = try parseList("q=Foo&_sort=views,title&_order=desc,asc&_embed=comments,likes&_embed=tags&_expand=author")
        #expect(query.search == "Foo")
        #expect(query.sort == [SortKey(path: ["views"], isDescending: true), SortKey(path: ["title"], isDescending: false)])
        #expect(query.embeds == ["comments", "likes", "tags"])
        #expect(query.expands == ["author"])
        #expect(
            try parseList("_sort=-views,author.name").sort
                == [SortKey(path: ["views"], isDescending: true), SortKey(path: ["author", "name"], isDescending: false)])
        #expect(try parseList("_sort=a&_order=DESC").sort == [SortKey(path: ["a"], isDescending: true)])
        #expect(try parseList("q=").search == nil)
    }

    static let paginationTable: [(query: String, pagination: Pagination)] = [
        ("", .none),
        ("_page=2", .page(number: 2, size: 10)),
        ("_page=3&_limit=5", .page(number: 3, size: 5)),
        ("_page=0&_limit=0", .page(number: 1, size: 10)),
        ("_start=20&_end=30", .slice(start: 20, end: 30)),
        ("_start=20&_limit=10", .slice(start: 20, end: 30)),
        ("_limit=5", .slice(start: 0, end: 5)),
        ("_start=7", .slice(start: 7, end: nil)),
        ("_end=4", .slice(start: 0, end: 4)),
        ("_start=9&_end=3", .slice(start: 9, end: 9)),
        ("_per_page=25", .envelope(page: 1, perPage: 25)),
        ("_page=2&_per_page=25", .envelope(page: 2, perPage: 25)),
        ("_page=0&_per_page=0", .envelope(page: 1, perPage: 1)),
    ]

    @Test(arguments: paginationTable)
    func paginationParses(_ row: (query: String, pagination: Pagination)) throws {
        #expect(try parseList(row.query).pagination == row.pagination)
    }

    static let badQueries: [(query: String, detailContains: String)] = [
        ("views:between=1", "unknown operator 'between'"),
        ("views:gt:x=1", "unknown operator 'x'"),
        ("_page=abc", "_page must be a whole number"),
        ("_page=-1", "_page must be a whole number"),
        ("_limit=1.5", "_limit must be a whole number"),
        ("_start=x", "_start must be a whole number"),
        ("_end=-3", "_end must be a whole number"),
        ("_per_page=ten", "_per_page must be a whole number"),
        ("_page=99999999999999999999", "_page must be at most"),
        ("_order=up&_sort=a", "_order takes asc or desc"),
        // Without _sort too: json-server ignores it there, openapi.yaml promises a 400.
        ("_order=%26", "_order takes asc or desc"),
        ("_where=not-json", "_where must be JSON"),
        ("_where=[1]", "_where must be a JSON object"),
        (#"_where={"views":5}"#, "'views' must be an object of operators"),
        (#"_where={"views":{"gt":1,"between":2}}"#, "unknown operator 'between'"),
        (#"_where={"or":[]}"#, "\"or\" must be a non-empty array"),
        (#"_where={"or":[1]}"#, "every branch of \"or\" must be an object"),
        (#"_where={"views":{"gt":[1]}}"#, "takes a string, number, boolean or null"),
        (#"_where={"views":{"gt":null}}"#, "needs a value, not null"),
        ("a..b=1", "does not name a field"),
        ("_sort=a..b", "does not name a field"),
    ]

    @Test(arguments: badQueries)
    func badInputIs400(_ row: (query: String, detailContains: String)) throws {
        do {
            _ = try parseList(row.query)
            Issue.record("'\(row.query)' parsed")
        } catch let error as any ProblemConvertible {
            // The query language (BudgetCore) throws MalformedQuery; BudgetAPI answers it as a 400 problem.
            #expect(error is MalformedQuery)
            #expect(error.problem.status == .badRequest)
            #expect(error.problem.detail?.contains(row.detailContains) == true, "\(error.problem.detail ?? "")")
        }
    }
}
