@testable import BudgetAPI
import Postgres
import Testing

/// The list language run by PostgreSQL on generic documents and typed rows (docs/json-server.md, the query language).
@Suite struct ListingDatabaseTests {
    static let documentsSeed = """
        INSERT INTO collections (ledger_id, name, kind) VALUES (1, 'posts', 'plural'), (1, 'other', 'plural');
        INSERT INTO documents (ledger_id, collection, id, body) VALUES
        (1, 'posts', '1', '{"id":1,"title":"json-server","views":100,"group":"x","author":{"name":"typicode"},"published":"2024-03-01"}'),
        (1, 'posts', '2', '{"id":2,"title":"Swift on Server","views":9,"group":"x","author":{"name":"ann"},"published":"2024-02-29T23:30:00Z"}'),
        (1, 'posts', '3', '{"id":3,"title":"100% pure","views":"10","group":"y","author":{"name":"Bob"},"published":"2023-12-31"}'),
        (1, 'posts', '4', '{"id":"4","title":"Null views","views":null,"tags":["a","b"]}'),
        (1, 'other', '1', '{"id":1,"title":"json-server"}');
        """

    static let table: [(query: String, ids: [String])] = [
        ("", ["1", "2", "3", #""4""#]),
        ("id=1&id=3", ["1", "3"]),
        ("id=4", [#""4""#]),
        ("views=10", ["3"]),
        ("author.name=ann", ["2"]),
        ("tags[1]=b", [#""4""#]),
        ("views_gte=10", ["1", "3"]),
        ("views_lte=10", ["2", "3"]),
        ("views_gte=9&views_lte=10", ["2", "3"]),
        ("views_ne=100", ["2", "3"]),
        ("id_ne=1&id_ne=2", ["3", #""4""#]),
        ("title_like=^JSON", ["1"]),
        ("title_like=server$&title_like=pure", ["1", "2", "3"]),
        ("q=TYPICODE", ["1"]),
        ("q=100", ["1", "3"]),
        ("q=%", ["3"]),
        ("q=title", []),
        ("_sort=group,views&_order=desc,asc", ["3", "2", "1", #""4""#]),
        ("_sort=-group,-views", ["3", "1", "2", #""4""#]),
        // Numbers sort numerically (9 before 100); across types jsonb's order applies: a string before any number.
        ("views_gte=0&_sort=views", ["3", "2", "1"]),
        ("published_gte=2024-03-01", ["1"]),
        ("published_lt=2024-03-01", ["2", "3"]),
        ("published_gt=2024-02-29T12:00:00Z", ["1", "2"]),
        ("title:contains=SERVER", ["1", "2"]),
        ("title:startsWith=100%", ["3"]),
        ("id:in=2,4", ["2", #""4""#]),
        ("views:gt=50", ["1"]),
        (#"_where={"or":[{"views":{"gt":50}},{"author":{"name":{"eq":"Bob"}}}]}"#, ["1", "3"]),
        (#"_where={"views":{"eq":null}}"#, [#""4""#]),
        ("_page=2&_limit=3", [#""4""#]),
        ("_start=1&_end=3", ["2", "3"]),
        ("_per_page=2&_page=9", ["3", #""4""#]),
        ("_per_page=3", ["1", "2", "3"]),
    ]

    @Test func genericListsAnswerTheRightRecords() async throws {
        let database = try await ListingDatabase.make(seed: Self.documentsSeed)
        for row in Self.table {
            let ids = try await database.documents(row.query.addingPercentEncodingKeepingSeparators())
            #expect(ids == row.ids, "\(row.query)")
        }
        let paged = try await database.list(
            "_per_page=2&_page=9", catalog: DocumentCatalog(column: "d.doc", collection: "posts", ledger: .first), source: .documents("posts"))
        #expect(paged.total == 4)
        #expect(try await database.documents("title=json-server", in: "other") == ["1"])
    }

    @Test func invalidRegularExpressionIs2201BAndA400() async throws {
        let database = try await ListingDatabase.make(seed: Self.documentsSeed)
        do {
            _ = try await database.documents("title_like=" + "(".addingPercentEncodingKeepingSeparators())
            Issue.record("an unbalanced pattern was accepted")
        } catch let error as PostgresError {
            #expect(error.sqlState == .invalidRegularExpression)
            #expect(APIError(translating: error)?.problem.status == .badRequest)
        }
    }

    @Test func injectionAttemptsLeaveTheDataIntact() async throws {
        let database = try await ListingDatabase.make(seed: Self.documentsSeed)
        let evil = "x'); DROP TABLE documents; --".addingPercentEncodingForQuery()
        let evilPattern = "x'; DROP TABLE documents; --".addingPercentEncodingForQuery()
        let whereJSON = #"{"a'--":{"eq":"'; DELETE FROM documents; --"}}"#.addingPercentEncodingForQuery()
        let query = "\(evil)=\(evil)&title_like=\(evilPattern)&q=\(evil)&_sort=\(evil)&\(evil)_gte=\(evil)&_where=\(whereJSON)"
        #expect(try await database.documents(query) == [])
        #expect(try await database.documents("_sort=\(evil)") == ["1", "2", "3", #""4""#])
        #expect(try await database.scalar("SELECT count(*) FROM documents") == "5")
    }

    static let typedSeed = """
        INSERT INTO categories (ledger_id, id, title, amount) VALUES (1, 1, 'Food', 100.00), (1, 2, 'Rent', 900.00);
        INSERT INTO transactions (ledger_id, id, category_id, title, amount, date, note) VALUES
        (1, 1, 1, 'Bread', 2.50, '2024-01-05', 'bakery 10'),
        (1, 2, 1, 'Cheese', 12.30, '2024-02-29', NULL),
        (1, 3, 2, 'March rent', 900.00, '2024-03-01', 'flat'),
        (1, 4, 1, 'Wine', 0.10, '2024-03-02', NULL);
        """

    static let typedTable: [(query: String, ids: [String])] = [
        ("amount_gte=12.3", ["2", "3"]),
        ("amount=0.1", ["4"]),
        ("amount_lt=12.301", ["1", "2", "4"]),
        ("date_gte=2024-02-29&date_lte=2024-03-01", ["2", "3"]),
        ("categoryId=2&categoryId=3", ["3"]),
        ("q=BAKERY", ["1"]),
        ("q=900", ["3"]),
        ("title_like=^(bread|wine)$", ["1", "4"]),
        ("note_ne=flat", ["1"]),
        ("_sort=categoryId,-amount", ["2", "1", "4", "3"]),
        ("_page=2&_limit=2&_sort=-date", ["2", "1"]),
    ]

    @Test func typedListsCompareByColumnType() async throws {
        let database = try await ListingDatabase.make(seed: Self.typedSeed)
        for row in Self.typedTable {
            let answer = try await database.list(
                row.query.addingPercentEncodingKeepingSeparators(), catalog: Transactions.shape.catalog, source: .transactions)
            #expect(answer.ids == row.ids, "\(row.query)")
        }
        let spent = try await database.list("spent_gt=0&remaining_gt=50", catalog: Categories.shape.catalog, source: .categories)
        #expect(spent.ids == ["1"])
        do {
            _ = try await database.list(
                "title_like=" + "(".addingPercentEncodingKeepingSeparators(),
                catalog: Transactions.shape.catalog, source: .transactions)
            Issue.record("an unbalanced pattern was accepted")
        } catch let error as PostgresError {
            #expect(error.sqlState == .invalidRegularExpression)
        }
    }
}

extension String {
    /// Percent-encodes the characters a query value may not carry raw, keeping `=` and `&` as separators.
    func addingPercentEncodingKeepingSeparators() -> String {
        split(separator: "&", omittingEmptySubsequences: false).map { item in
            item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map { String($0).addingPercentEncodingForQuery() }.joined(separator: "=")
        }.joined(separator: "&")
    }
}
