import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

/// A `POST` with an array body (docs/api.md): written by one INSERT when every record gives a row of it, with
/// the answer the records written one by one gave; when PostgreSQL refuses that INSERT, the records are written
/// one by one, so the refusal answers as before, and nothing is written either way.
@Suite struct ArrayCreateTests {
    /// How many transactions and statements wrote the transactions with these titles: the rows one statement
    /// wrote share its transaction id (`xmin`) and command id (`cmin`).
    func writes(of titles: [String], app: TestApp) async throws -> String {
        let list = titles.map { "'\($0)'" }.joined(separator: ",")
        return try await app.scalar(
            """
            SELECT count(DISTINCT xmin::text) || ' transaction(s), ' || count(DISTINCT xmin::text || '/' || cmin::text) || ' statement(s)'
            FROM transactions WHERE title IN (\(list))
            """) ?? ""
    }

    /// `elements` posted to `path` through an atomic batch: inside the batch's transaction, where an array is
    /// written one record at a time, as every array was before it was written by one INSERT.
    func oneByOne(_ path: String, _ elements: [String], app: TestApp) async throws -> TestResponse {
        try await app.request(
            "POST", "/batch",
            json: #"{"atomic":true,"operations":[{"method":"POST","path":"\#(path)","body":[\#(elements.joined(separator: ","))]}]}"#)
    }

    /// An answer with its ids and times replaced, to compare two answers that wrote different records.
    func withoutIDsAndTimes(_ text: some StringProtocol) -> String {
        String(text).replacing(/"id":\d+/, with: #""id":#"#).replacing(/"(createdAt|updatedAt)":"[^"]*"/, with: #""time":#"#)
    }

    /// The owners the paths name: category 500 and account 1, and a transaction with id 1.
    func makeOwners(_ app: TestApp) async throws {
        #expect(try await app.request("POST", "/categories", json: #"{"id":500,"title":"Food","amount":100}"#).status == 201)
        #expect(try await app.request("POST", "/accounts", json: #"{"id":1,"name":"Cash","type":"cash"}"#).status == 201)
        #expect(try await app.request("POST", "/transactions", json: #"{"id":1,"categoryId":500,"title":"Old","amount":1}"#).status == 201)
    }

    /// A body member naming category 500 where the path does not.
    static func category(_ path: String) -> String { path.hasPrefix("/categories/") ? "" : #""categoryId":500,"# }

    @Test(arguments: ["/transactions", "/categories/500/transactions", "/accounts/1/transactions"])
    func anArrayIsOneInsertAnsweringAsOneByOne(path: String) async throws {
        try await TestApp.with { app in
            try await makeOwners(app)
            let category = Self.category(path)
            let elements = [
                #"{\#(category)"title":"N1","amount":1.5}"#,
                #"{\#(category)"title":"N2","amount":-2,"note":"n","date":"2026-01-31"}"#,
                #"{"id":900,\#(category)"title":"N3","amount":"3.10","cleared":"cleared","payee":"Shop"}"#,
            ]
            let changesBefore = try await app.loggedRecordCount()
            let response = try await app.request("POST", path, json: "[\(elements.joined(separator: ","))]")
            #expect(response.status == 201, "\(response.text)")
            #expect(response.header("Location") == nil)
            #expect(try await writes(of: ["N1", "N2", "N3"], app: app) == "1 transaction(s), 1 statement(s)")
            #expect(try await app.loggedRecordCount() == changesBefore + 3)
            // The answer is the records as each reads afterwards, byte for byte, in the body's order.
            let ids = response.array.map { $0["id"] as? Int ?? -1 }
            #expect(ids == [2, 3, 900])
            var reads: [String] = []
            for id in ids { reads.append(try await app.request("GET", "/transactions/\(id)").text) }
            #expect(response.text == "[\(reads.joined(separator: ","))]")

            // The same records written one by one (other ids, other times) answer the same bytes.
            let old = try await oneByOne(path, elements.map { $0.replacingOccurrences(of: #""id":900"#, with: #""id":950"#) }, app: app)
            #expect(old.status == 200, "\(old.text)")
            guard let body = old.text.range(of: #""body":"#) else {
                Issue.record("no body in \(old.text)")
                return
            }
            let oldAnswer = old.text[body.upperBound...].dropLast(3)  // the result's `}`, then `]}`
            #expect(old.batchStatuses == [201])
            #expect(withoutIDsAndTimes(oldAnswer) == withoutIDsAndTimes(response.text))
            // …in one statement each: the path this test compares with is the old one.
            #expect(try await writes(of: ["N1", "N2", "N3"], app: app) == "2 transaction(s), 4 statement(s)")
        }
    }

    /// A statement takes at most 65,535 parameters: an array longer than `BatchRoute.maximumRunLength` is
    /// several INSERTs, in one transaction.
    @Test func anArrayLongerThanOneStatementTakesIsSeveralInsertsInOneTransaction() async throws {
        try await TestApp.with { app in
            try await makeOwners(app)
            let count = 2_100
            let elements = (0..<count).map { #"{"title":"L\#($0)","amount":1}"# }
            let response = try await app.request("POST", "/categories/500/transactions", json: "[\(elements.joined(separator: ","))]")
            #expect(response.status == 201, "\(response.text.prefix(300))")
            let titles = response.array.map { $0["title"] as? String ?? "" }
            #expect(titles == (0..<count).map { "L\($0)" })
            #expect(try await app.rowCount(of: "transactions") == count + 1)
            #expect(
                try await app.scalar("SELECT count(DISTINCT xmin::text) || '/' || count(DISTINCT cmin::text) FROM transactions WHERE id > 1") == "1/3"
            )
        }
    }

    /// A refused array answers what it answered when its records were written one by one (the same array in
    /// a batch is still written that way), its fields named by index, and writes nothing.
    @Test(
        arguments: [
            ("/categories/999/transactions", #"{"title":"F3","amount":1}"#, nil, 404),
            ("/accounts/999/transactions", #"{"categoryId":500,"title":"F3","amount":1}"#, nil, 404),
            ("/transactions", #"{"categoryId":999,"title":"F3","amount":1}"#, nil, 422),
            ("/accounts/1/transactions", #"{"categoryId":999,"title":"F3","amount":1}"#, nil, 422),
            ("/transactions", #"{"id":1,"categoryId":500,"title":"F3","amount":1}"#, #"{"id":78,"categoryId":500,"title":"F4","amount":4}"#, 409),
            ("/categories/500/transactions", #"{"id":77,"title":"F3","amount":1}"#, #"{"id":77,"title":"F4","amount":4}"#, 409),
            ("/transactions", #"{"categoryId":500,"title":"F3","amount":"x"}"#, nil, 422),
        ] as [(String, String, String?, Int)])
    func aRefusedArrayAnswersAsOneByOneAndWritesNothing(path: String, third: String, fourth: String?, status: Int) async throws {
        try await TestApp.with { app in
            try await makeOwners(app)
            let category = Self.category(path)
            let elements = [
                #"{\#(category)"title":"F1","amount":1}"#, #"{\#(category)"title":"F2","amount":2}"#, third,
                fourth ?? #"{\#(category)"title":"F4","amount":4}"#,
            ]
            let changesBefore = try await app.loggedRecordCount()
            let response = try await app.request("POST", path, json: "[\(elements.joined(separator: ","))]")
            #expect(response.status == status, "\(response.text)")
            let old = try await oneByOne(path, elements, app: app)
            #expect(old.status == status, "\(old.text)")
            #expect(old.object["operation"] as? Int == 0)
            let failure = old.object["failure"] as? NSDictionary
            #expect(failure != nil && failure == response.object as NSDictionary, "\(response.text) \(old.text)")
            let headers = old.object["headers"] as? [String: Any] ?? [:]
            #expect(headers["Location"] as? String == response.header("Location"))
            if status == 422 {
                // The body's checks name the record by its index; a foreign key's refusal names the member alone.
                let fields = (response.object["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
                #expect(fields == [third.contains(#""x""#) ? "[2].amount" : "categoryId"], "\(response.text)")
            }
            #expect(try await app.rowCount(of: "transactions") == 1)
            #expect(try await app.loggedRecordCount() == changesBefore)
        }
    }

    /// Records that need statements before their INSERT (an import id's holder looked up, a split's parts), an
    /// array whose server ids one statement would give otherwise, and resources without combined inserts
    /// (categories) are written one by one, as before.
    @Test func recordsThatNeedStatementsOfTheirOwnAreWrittenOneByOne() async throws {
        try await TestApp.with { app in
            try await makeOwners(app)
            let imported = try await app.request(
                "POST", "/transactions",
                json: #"[{"categoryId":500,"title":"I1","amount":1},{"accountId":1,"categoryId":500,"title":"I2","amount":2,"importId":"x"}]"#)
            #expect(imported.status == 201, "\(imported.text)")
            #expect(try await writes(of: ["I1", "I2"], app: app) == "1 transaction(s), 2 statement(s)")
            // A record without an id after one with an id: one statement would give it the sequence's next id
            // (4), one by one gives it the id after the client's, as it always has.
            let chosen = try await app.request(
                "POST", "/transactions",
                json:
                    #"[{"categoryId":500,"title":"S1","amount":1},{"id":900,"categoryId":500,"title":"S2","amount":2},{"categoryId":500,"title":"S3","amount":3}]"#
            )
            #expect(chosen.status == 201, "\(chosen.text)")
            #expect(chosen.array.map { $0["id"] as? Int ?? -1 } == [4, 900, 901])
            #expect(try await writes(of: ["S1", "S2", "S3"], app: app) == "1 transaction(s), 3 statement(s)")
            let categories = try await app.request("POST", "/categories", json: #"[{"title":"C1","amount":1},{"title":"C2","amount":2}]"#)
            #expect(categories.status == 201, "\(categories.text)")
            #expect(try await app.scalar("SELECT count(DISTINCT xmin::text || '/' || cmin::text) FROM categories WHERE title IN ('C1','C2')") == "2")
        }
    }
}
