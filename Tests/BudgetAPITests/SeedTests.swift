@testable import BudgetAPI
import Foundation
import Postgres
import Testing
import TestSupport
import APITestSupport

extension TestApp {
    /// The database as `budget-server export` prints it.
    func export() async throws -> String {
        try await runOffCooperativePool { [databaseURL] in
            let connection = try Connection.connect(to: databaseURL)
            defer { connection.close() }
            return String(decoding: try connection.transaction { try Exporter.export($0, ledger: .first) }, as: UTF8.self)
        }
    }

    /// The issues of a seed that must fail, or an empty list when it loaded.
    func seedIssues(_ json: String, replacing: Bool = false) async throws -> [String] {
        do {
            try await seed(json, replacing: replacing)
            return []
        } catch SeedError.invalid(let issues) {
            return issues.map(\.description)
        }
    }
}

@Suite struct SeedTests {
    static let blog = #"""
        {"posts":[{"id":1,"title":"json-server","author":"typicode"},{"id":2,"title":"Big","views":1234567890123456789}],
         "comments":[{"id":1,"body":"some comment","postId":1}],
         "profile":{"name":"typicode","settings":{"theme":"dark"}},
         "categories":[{"id":3,"title":"Food","amount":"100.50"}],
         "transactions":[{"id":7,"categoryId":3,"title":"Milk","amount":3.49,"date":"2026-11-20","note":null}]}
        """#

    @Test func seedLoadsCollectionsSingularsAndTypedTables() async throws {
        try await TestApp.with { app in
            let summary = try await app.seed(Self.blog)
            #expect(summary.description.contains("posts: 2 records"))
            #expect(try await app.request("GET", "/posts/2").text == #"{"id":2,"title":"Big","views":1234567890123456789}"#)
            #expect(try await app.request("GET", "/profile").text == #"{"name":"typicode","settings":{"theme":"dark"}}"#)
            let category = try await app.request("GET", "/categories/3")
            #expect(category.text.contains(#""amount":100.50,"rollover":false,"spent":3.49"#))
            #expect(try await app.request("GET", "/transactions/7").object["title"] as? String == "Milk")
            // The next server id follows the largest seeded one, in generic and typed collections alike.
            #expect(try await app.request("POST", "/posts", json: #"{"title":"new"}"#).object["id"] as? Int == 3)
            #expect(try await app.request("POST", "/categories", json: #"{"title":"New","amount":1}"#).object["id"] as? Int == 4)
        }
    }

    @Test func exportThenSeedThenExportIsUnchanged() async throws {
        try await TestApp.with { first in
            try await first.seed(Self.blog)
            _ = try await first.request("PATCH", "/categories/3", json: #"{"amount":"99.99"}"#)
            _ = try await first.request("POST", "/comments", json: #"{"body":"ünïcode \"quoted\"","postId":2}"#)
            let exported = try await first.export()
            #expect(exported.hasPrefix(#"{"categories":[{"id":3,"title":"Food","amount":99.99,"rollover":false,"createdAt":"#))
            #expect(!exported.contains("spent"))
            #expect(exported.contains(#""version":2"#))
            try await TestApp.with { second in
                try await second.seed(exported)
                #expect(try await second.export() == exported)
                #expect(try await second.request("GET", "/db").text == exported)
            }
        }
    }

    @Test func malformedSeedNamesThePathAndLoadsNothing() async throws {
        try await TestApp.with { app in
            let issues = try await app.seedIssues(
                #"""
                {"posts":[{"id":1},{"id":2},{"id":1},4],"health":[],"odd":true,
                 "transactions":[{"categoryId":1,"title":"x","amount":"1.234"}]}
                """#)
            #expect(issues.contains("$.posts[3]: record is not an object (it is number)"))
            #expect(issues.contains("$.posts[2].id: duplicate id 1 (also at $.posts[0])"))
            #expect(issues.contains { $0.hasPrefix("$.health: 'health' is reserved") })
            #expect(issues.contains { $0.hasPrefix("$.odd: must be an array") })
            #expect(issues.contains { $0.hasPrefix("$.transactions[0].amount: ") })
            #expect(try await app.scalar("SELECT count(*) FROM collections") == "0")
        }
    }

    @Test func constraintFailuresMidwayRollBackEverything() async throws {
        try await TestApp.with { app in
            // The collections and the first category are written before the missing category is noticed.
            let issues = try await app.seedIssues(
                #"""
                {"posts":[{"id":1}],"categories":[{"id":1,"title":"A","amount":1}],
                 "transactions":[{"id":1,"categoryId":1,"title":"ok","amount":1},{"id":2,"categoryId":9,"title":"x","amount":1}]}
                """#)
            #expect(issues == ["$.transactions[1].categoryId: no category has this id"])
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
            #expect(try await app.scalar("SELECT count(*) FROM documents") == "0")
            #expect(try await app.seedIssues("[1]") == ["$: must be a JSON object of collections, not array"])
            #expect(try await app.seedIssues("{nope").first?.hasPrefix("$: not valid JSON") == true)
        }
    }

    @Test func nonEmptyDatabaseIsLeftAloneUnlessReplacing() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"posts":[{"id":1,"title":"old"}]}"#)
            await #expect(throws: SeedError.self) { try await app.seed(#"{"notes":[]}"#) }
            #expect(try await app.request("GET", "/posts").text == #"[{"id":1,"title":"old"}]"#)
            try await app.seed(#"{"notes":[{"id":"a"}]}"#, replacing: true)
            #expect(try await app.request("GET", "/posts").status == 404)
            #expect(try await app.request("GET", "/notes").text == #"[{"id":"a"}]"#)
            let empty = try await runOffCooperativePool { [url = app.databaseURL] in
                let connection = try Connection.connect(to: url)
                defer { connection.close() }
                return try Seeder.isDatabaseEmpty(connection, ledger: .first)
            }
            #expect(!empty)
        }
    }

    @Test func recordsWithoutIDsAreNumberedAfterTheLargest() async throws {
        try await TestApp.with { app in
            try await app.seed(#"{"notes":[{"text":"a"},{"id":5,"text":"b"},{"id":null,"text":"c"}]}"#)
            #expect(
                try await app.request("GET", "/notes").text
                    == #"[{"id":6,"text":"a"},{"id":5,"text":"b"},{"id":7,"text":"c"}]"#)
            #expect(try await app.request("POST", "/notes", json: "{}").object["id"] as? Int == 8)
        }
    }
}
