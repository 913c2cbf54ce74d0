@testable import BudgetAPI
import Postgres
import Testing

func plan(_ query: String, catalog: some FieldCatalog = DocumentCatalog(column: "d.doc", collection: "records", ledger: .first)) throws -> ListPlan {
    try ListPlan(try parseList(query), catalog: catalog)
}

@Suite struct ListingPlanTests {
    @Test func noFilterIsTrue() throws {
        let empty = try plan("")
        #expect(empty.condition.sql == "TRUE")
        #expect(empty.ordering == nil)
        #expect(empty.limit == nil && empty.offset == 0)
        #expect(!empty.usesPatterns)
        // Without _sort the page follows the caller's default order alone, and nothing counts the matches.
        let rows = empty.selectCursorRows(columns: "d.body", from: "documents d", scope: "TRUE", tieBreak: "d.position", offset: 0).sql
        #expect(rows.contains("d.position AS sort_last") && rows.contains("ORDER BY sort_last LIMIT ALL"))
        #expect(!empty.selectHeader(from: "documents d", scope: "TRUE", ledger: .first).sql.contains("count(*) AS total"))
    }

    /// The presence test json-server 0.17's plain `field=value` carries: an unknown field filters nothing.
    /// It reads the ledger's documents alone: another household's records never decide it.
    static let presence =
        "coalesce((SELECT true FROM documents present WHERE present.ledger_id = $1 AND present.collection = $2 "
        + "AND present.doc #> $3::text[] IS NOT NULL ORDER BY present.position LIMIT 1), false)"

    @Test func genericEqualityUsesContainmentForEveryMeaningOfTheText() throws {
        let equal = try plan("postId=1")
        #expect(equal.condition.sql == "d.doc @> ANY (CASE WHEN \(Self.presence) THEN ARRAY[$4::jsonb, $5::jsonb] ELSE ARRAY['{}'::jsonb] END)")
        #expect(equal.condition.bindings == ["1", "records", #"{"postId"}"#, #"{"postId":"1"}"#, #"{"postId":1}"#])
        let deep = try plan("author.name=true")
        #expect(deep.condition.bindings.suffix(2) == [#"{"author":{"name":"true"}}"#, #"{"author":{"name":true}}"#])
        let text = try plan("title=01")
        #expect(text.condition.bindings.suffix(1) == [#"{"title":"01"}"#])
        // The 1.x operator spelling always filters, so it has no presence test.
        let spelled = try plan("postId:eq=1")
        #expect(spelled.condition.sql == "(d.doc @> $1::jsonb OR d.doc @> $2::jsonb)")
        #expect(spelled.condition.bindings == [#"{"postId":"1"}"#, #"{"postId":1}"#])
    }

    @Test func arrayIndexPathsCompareTheMemberItself() throws {
        let indexed = try plan("tags[0]=a")
        #expect(indexed.condition.sql == "(NOT \(Self.presence) OR (d.doc #> $4::text[]) IN ($5::jsonb))")
        #expect(indexed.condition.bindings == ["1", "records", #"{"tags","0"}"#, #"{"tags","0"}"#, #""a""#])
    }

    @Test func rangesLikeAndNotEqual() throws {
        let range = try plan("views_gte=10&views_lte=20")
        #expect(
            range.condition.sql
                == "(query_compare((d.doc #> $1::text[]), $2) >= 0 AND query_compare((d.doc #> $3::text[]), $4) <= 0)")
        #expect(range.condition.bindings == [#"{"views"}"#, "10", #"{"views"}"#, "20"])
        let like = try plan("title_like=^a.c")
        #expect(like.condition.sql == "(d.doc #>> $1::text[]) ~* $2")
        #expect(like.usesPatterns)
        let notEqual = try plan("id_ne=1")
        #expect(notEqual.condition.sql == "(jsonb_typeof((d.doc #> $1::text[])) <> 'null' AND (d.doc #> $2::text[]) NOT IN ($3::jsonb, $4::jsonb))")
    }

    @Test func searchEscapesLikeWildcards() throws {
        let search = try plan("q=50%25_off")
        #expect(search.usesPatterns)
        #expect(search.condition.sql.contains("jsonb_path_query(d.doc, 'strict $.**')"))
        #expect(search.condition.bindings == [#"%50\%\_off%"#])
        let typed = try plan("q=rent", catalog: Transactions.shape.catalog)
        #expect(typed.condition.sql == "(t.title::text ILIKE $1 OR t.amount::text ILIKE $2 OR t.note::text ILIKE $3 OR t.payee::text ILIKE $4)")
        #expect(try plan("title:startsWith=a_b").condition.bindings.last == #"a\_b%"#)
    }

    @Test func sortingAndPages() throws {
        let sorted = try plan("_sort=views,-author.name&_page=3&_limit=5")
        #expect(sorted.ordering?.sql == "(d.doc #> $1::text[]) ASC NULLS LAST, (d.doc #> $2::text[]) DESC NULLS LAST")
        #expect(sorted.ordering?.bindings == [#"{"views"}"#, #"{"author","name"}"#])
        // The default order breaks ties after the _sort keys, so pages stay stable; a page needs the count.
        let rows = sorted.selectCursorRows(columns: "d.body", from: "documents d", scope: "TRUE", tieBreak: "d.position", offset: 10).sql
        #expect(rows.contains(#"ORDER BY "sort_1" ASC NULLS LAST, "sort_2" DESC NULLS LAST, sort_last LIMIT"#))
        #expect(sorted.selectHeader(from: "documents d", scope: "TRUE", ledger: .first).sql.contains("count(*) AS total"))
        #expect(sorted.limit == 5 && sorted.offset == 10)
        let slice = try plan("_start=4&_end=9")
        #expect(slice.limit == 5 && slice.offset == 4)
    }

    @Test func typedFieldsComeFromTheAllowList() throws {
        let typed = try plan("amount_gte=12.345&date_lte=2024-02-29&categoryId=3&title_like=x", catalog: Transactions.shape.catalog)
        #expect(
            typed.condition.sql
                == "(t.amount >= $1::numeric AND t.date <= $2::date AND t.category_id = $3::bigint AND t.title::text ~* $4)")
        let sorted = try plan("_sort=-date,amount", catalog: Transactions.shape.catalog)
        #expect(sorted.ordering?.sql == "t.date DESC NULLS LAST, t.amount ASC NULLS LAST")
        #expect(sorted.ordering?.bindings == [])
    }

    static let typedBadInput: [(query: String, detailContains: String)] = [
        ("nope=1", "unknown field 'nope' for a transaction; known fields: id, categoryId, title"),
        ("_sort=nope", "unknown field 'nope'"),
        ("amount_gte=ten", "'ten' is not a decimal amount"),
        ("date=2024-02-30", "is not a date"),
        ("categoryId=abc", "is not an integer"),
        ("createdAt_gte=yesterday", "ISO 8601"),
    ]

    @Test(arguments: typedBadInput)
    func typedBadInputIs400(_ row: (query: String, detailContains: String)) throws {
        do {
            _ = try plan(row.query, catalog: Transactions.shape.catalog)
            Issue.record("'\(row.query)' planned")
        } catch let error as APIError {
            #expect(error.problem.status == .badRequest)
            #expect(error.problem.detail?.contains(row.detailContains) == true, "\(error.problem.detail ?? "")")
        }
    }

    /// A hostile string in every place a client string reaches SQL stays a bound value.
    @Test func injectionStaysInBindings() throws {
        let evil = "x'); DROP TABLE documents; --"
        let encoded = evil.addingPercentEncodingForQuery()
        let query =
            "\(encoded)=\(encoded)&\(encoded)_gte=\(encoded)&\(encoded)_like=\(encoded)&q=\(encoded)&_sort=\(encoded)"
            + "&_where=" + #"{"\#(evil)":{"eq":"\#(evil)"}}"#.addingPercentEncodingForQuery()
        let generic = try plan(query)
        for sql in [generic.condition.sql, generic.ordering?.sql ?? ""] {
            #expect(!sql.contains("DROP"))
            #expect(!sql.contains(evil))
        }
        #expect(generic.condition.bindings.contains { $0?.contains("DROP TABLE") == true })
        let rows = generic.selectCursorRows(
            columns: "d.body", from: "documents d", scope: "d.collection = \("posts")", tieBreak: "d.position", offset: 0)
        #expect(
            !rows.sql.contains("DROP")
                && !generic.selectHeader(from: "documents d", scope: "d.collection = \("posts")", ledger: .first).sql.contains("DROP"))
        #expect(throws: APIError.self) { try plan("\(encoded)=1", catalog: Transactions.shape.catalog) }
        #expect(throws: APIError.self) { try plan("_sort=\(encoded)", catalog: Transactions.shape.catalog) }
    }
}

extension String {
    func addingPercentEncodingForQuery() -> String {
        var result = ""
        for byte in utf8 {
            let isPlain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            result += isPlain ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded()
        }
        return result
    }

    private func leftPadded() -> String { count == 1 ? "0" + self : self }
}
