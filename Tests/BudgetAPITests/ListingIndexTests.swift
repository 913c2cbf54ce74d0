@testable import BudgetAPI
import HTTPServer
import Postgres
import Testing
import TestSupport

/// Evidence for issue 3's "indexes that make the common filters and sorts fast on 100k records": the plans
/// PostgreSQL picks for the statements generic lists really run, over 100,000 comments and 1,000 posts.
///
/// Containment filters (`postId=7`, `author.name=…`) must use the GIN index `documents_doc_idx`, the default
/// creation order the b-tree `documents_collection_position_idx`, and `_embed`/`_expand` an index per record.
/// `_sort` on a JSON field has no index to use (any member may be sorted on); the tests state that too.
@Suite struct ListingIndexTests {
    /// The loaded database, shared by the tests: loading it takes most of the suite's time.
    static let database = Task<String, any Error> {
        let url = try await TestDatabase.fresh()
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            // A GIN index builds in bulk several times faster than it grows row by row; PostgreSQL's own
            // definition of the migration's index is dropped and run again, so the plans concern that index.
            let definition = try connection.query("SELECT pg_get_indexdef('documents_doc_idx'::regclass)")[0].column(0) ?? ""
            try connection.execute(
                script: """
                    DROP INDEX documents_doc_idx;
                    INSERT INTO collections (ledger_id, name, kind, next_id) VALUES (1, 'posts', 'plural', 1001), (1, 'comments', 'plural', 100001);
                    INSERT INTO documents (ledger_id, collection, id, body)
                    SELECT 1, 'comments', i::text, format('{"id":%s,"body":"comment %s","postId":%s,"author":{"name":"author %s"},"views":%s}',
                        i, i, i % 1000 + 1, i % 500, i * 7919 % 100000)::json
                    FROM generate_series(1, 100000) AS i;
                    INSERT INTO documents (ledger_id, collection, id, body)
                    SELECT 1, 'posts', i::text, format('{"id":%s,"title":"post %s"}', i, i)::json FROM generate_series(1, 1000) AS i;
                    \(definition);
                    ANALYZE documents;
                    """)
        }
        return url
    }

    /// The count finds the 100 matches through the GIN index. For the page PostgreSQL may instead walk the
    /// creation-order index and test each record until 10 match (it does on this evenly spread data): both are
    /// index plans, and neither reads the table from end to end.
    @Test func equalityUsesTheContainmentIndex() async throws {
        let plan = try await Self.explain("/comments?postId=7&_page=1")
        #expect(plan.uses("Bitmap Index Scan", on: "documents_doc_idx", in: .count), "\(plan)")
        #expect(plan.usesAnIndex(in: .page), "\(plan)")
        #expect(!plan.scansSequentially, "\(plan)")
    }

    @Test func deepKeyEqualityUsesTheContainmentIndex() async throws {
        let plan = try await Self.explain("/comments?author.name=author%207&_limit=10")
        #expect(plan.uses("Bitmap Index Scan", on: "documents_doc_idx", in: .count), "\(plan)")
        #expect(plan.usesAnIndex(in: .page), "\(plan)")
        #expect(!plan.scansSequentially, "\(plan)")
    }

    @Test func filteredSortedPageSortsOnlyTheMatches() async throws {
        let plan = try await Self.explain("/comments?postId=7&_sort=views&_order=desc&_page=2&_limit=5")
        #expect(plan.uses("Bitmap Index Scan", on: "documents_doc_idx", in: .page), "\(plan)")
        #expect(plan.uses("Sort", in: .page), "\(plan)")
        #expect(!plan.scansSequentially, "\(plan)")
    }

    /// The page walks the b-tree in creation order and stops after it; X-Total-Count still counts every row.
    @Test func defaultPageWalksTheCreationOrderIndex() async throws {
        let plan = try await Self.explain("/comments?_page=3&_limit=10")
        #expect(plan.uses("Index Scan", on: "documents_collection_position_idx", in: .page), "\(plan)")
        #expect(!plan.uses("Seq Scan", in: .page), "\(plan)")
        #expect(!plan.uses("Sort", in: .page), "\(plan)")
    }

    /// No index orders by an arbitrary member: PostgreSQL reads the collection and keeps the top rows in a
    /// bounded heap sort. An expression index per field would have to be guessed, so none is pretended here.
    @Test func sortOnAJSONFieldNeedsTheWholeCollection() async throws {
        let plan = try await Self.explain("/comments?_sort=views&_limit=10")
        #expect(plan.uses("Sort", in: .page), "\(plan)")
        #expect(!plan.uses("Index Scan", on: "documents_collection_position_idx", in: .page), "\(plan)")
    }

    @Test func embedAndExpandLookUpEachPageRecordByIndex() async throws {
        let embed = try await Self.explain("/posts?_page=1", relations: [.children(collection: "comments", field: "postId")])
        #expect(embed.uses("Bitmap Index Scan", on: "documents_doc_idx", in: .relation), "\(embed)")
        let expand = try await Self.explain("/comments?_page=1", relations: [.parent(member: "post", collection: "posts", field: "postId")])
        #expect(expand.uses("Index Scan", on: "documents_pkey", in: .relation), "\(expand)")
        #expect(!embed.uses("Seq Scan", in: .relation) && !expand.uses("Seq Scan", in: .relation))
    }

    /// The plans of the statements `CollectionListing` runs for `target` (a path and query on a generic
    /// collection): its header, and its rows as the cursor that reads them is planned.
    static func explain(_ target: String, relations: [DocumentRelation] = []) async throws -> ExplainedPlan {
        let request = Request(method: .get, target: target)
        let collection = String(request.path.dropFirst())
        let statements = try CollectionListing(request: request, collection: collection, ledger: .first, maxRows: nil)
            .statements(scope: CollectionListing.scope(listing: collection, in: .first), relations: relations)
        let url = try await database.value
        let (header, rows) = try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            let header = try connection.query("EXPLAIN (FORMAT JSON) \(statements.header)")[0].bytes(at: 0) ?? []
            let rows = try connection.transaction { connection in
                try connection.query("EXPLAIN (FORMAT JSON) DECLARE budget_list NO SCROLL CURSOR FOR \(statements.rows)")[0].bytes(at: 0) ?? []
            }
            return (header, rows)
        }
        return try ExplainedPlan(header: header, rows: rows)
    }
}
