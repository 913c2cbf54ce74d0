import Foundation
import Testing
import TestSupport
import APITestSupport
import BudgetCore

extension TestApp {
    /// One request written as it is (any body, any media type), on a connection of its own.
    func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil) async throws -> TestResponse {
        try await runOffCooperativePool { [port] in
            let client = try TestClient(port: port, timeout: .seconds(60))
            defer { client.close() }
            var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            if let body { head += "Content-Length: \(body.count)\r\n" }
            try client.send(Array((head + "\r\n").utf8) + (body ?? []))
            return try client.readResponse()
        }
    }

    /// A README command, as curl would send it.
    func send(_ command: ReadmeCommand) async throws -> TestResponse {
        try await send(command.method, command.target, headers: command.headers.sorted { $0.key < $1.key }, body: command.body)
    }

    /// `POST /transactions/import` with `bytes` as they are (a BOM, a NUL, any encoding).
    func importStatement(
        _ bytes: [UInt8], query: String = "", contentType: String = "text/csv", headers: [(String, String)] = []
    ) async throws -> TestResponse {
        try await send("POST", "/transactions/import\(query)", headers: [("Content-Type", contentType)] + headers, body: bytes)
    }

    func importStatement(_ text: String, query: String = "", contentType: String = "text/csv", headers: [(String, String)] = []) async throws
        -> TestResponse
    {
        try await importStatement(Array(text.utf8), query: query, contentType: contentType, headers: headers)
    }

    /// A fresh app with the categories the statement tests book to: 1 Groceries, 2 Rent.
    static func withStatementCategories(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with { app in
            let categories = #"[{"title":"Groceries","amount":400},{"title":"Rent","amount":1000}]"#
            #expect(try await app.request("POST", "/categories", json: categories).status == 201)
            try await body(app)
        }
    }

    /// Every transaction as (category, title, amount, date, note, importId), in id order, as PostgreSQL holds it;
    /// `category` says how a row names its category, e.g. `lower(c.title)`.
    func transactionRows(category: String = "t.category_id") async throws -> [[String]] {
        let table = try await scalar(
            #"""
            SELECT string_agg(concat_ws(E'\x1f', \#(category), t.title, t.amount, t.date, coalesce(t.note, 'null'), coalesce(t.import_id, 'null')),
                              E'\x1e' ORDER BY t.id) FROM transactions t JOIN categories c ON c.id = t.category_id
            """#)
        return (table ?? "").split(separator: "\u{1e}").map { $0.split(separator: "\u{1f}", omittingEmptySubsequences: false).map(String.init) }
    }
}

/// `POST /transactions/import` (docs/import.md) and the `importId` rules of every transaction write.
@Suite struct StatementImportTests {
    @Test func overlappingStatementsCreateEachRowOnce() async throws {
        try await TestApp.withStatementCategories { app in
            let november = """
                date,amount,title,category
                2026-11-01,-12.50,Bakery,groceries
                2026-11-01,-12.50,Bakery,Groceries
                2026-11-03,-900.00,November rent,2
                """
            let first = try await app.importStatement(november)
            #expect(first.status == 201, "\(first.text)")
            #expect(first.object["created"] as? Int == 3)
            #expect(first.object["duplicates"] as? Int == 0)
            #expect((first.object["createdIds"] as? [Int])?.count == 3)
            // Two identical rows are two purchases: their derived ids count them (docs/import.md).
            #expect(try await app.transactionRows().map { $0[5] } == ["csv:2026-11-01:-1250:1", "csv:2026-11-01:-1250:2", "csv:2026-11-03:-90000:1"])

            let overlapping = """
                date,amount,title,category
                2026-11-01,-12.50,Bakery,Groceries
                2026-11-03,-900.00,November rent,Rent
                2026-11-04,-3.20,Coffee,Groceries
                """
            let second = try await app.importStatement(overlapping)
            #expect(second.status == 201, "\(second.text)")
            #expect(second.object["created"] as? Int == 1)
            #expect(second.object["duplicates"] as? Int == 2)
            #expect(second.object["duplicateImportIds"] as? [String] == ["csv:2026-11-01:-1250:1", "csv:2026-11-03:-90000:1"])
            let rows = try await app.transactionRows()
            #expect(rows.count == 4)
            // Money out (negative in the file) is spending; the derived id keeps the file's amount.
            #expect(rows.last == ["1", "Coffee", "3.20", "2026-11-04", "null", "csv:2026-11-04:-320:1"])

            let again = try await app.importStatement(overlapping)
            #expect(again.status == 200, "nothing new: \(again.text)")
            #expect(again.object["created"] as? Int == 0)
            #expect(again.object["createdIds"] as? [Int] == [])
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "4")

            // The imported rows reach the change feed like any write.
            let created = second.object["createdIds"] as? [Int] ?? []
            try await waitUntil("the import's row is in the change feed") {
                let page = try await app.changes("collection=transactions")
                return page.changes.contains {
                    ($0["id"] as? Int) == created.first && ($0["data"] as? [String: Any])?["importId"] as? String == "csv:2026-11-04:-320:1"
                }
            }
        }
    }

    /// `-1.234,56` is money out: 1234.56 spent; `2.500` is money in, a refund of 2500.00.
    @Test func aGermanBanksStatementImportsWithItsOwnFormat() async throws {
        try await TestApp.withStatementCategories { app in
            let statement = """
                Buchungstag;Wertstellung;Verwendungszweck;Betrag;Waehrung
                31.12.2026;02.01.2027;"Miete; Dezember";-1.234,56;EUR
                1.2.2026;01.02.2026;Gehalt;2.500;EUR
                05.02.2026;05.02.2026;Kaffee;-3,2;EUR
                """
            let response = try await app.importStatement(
                statement,
                query: "?delimiter=%3B&dateFormat=DD.MM.YYYY&decimal=,&category=2&columns=date:Buchungstag,amount:Betrag,title:Verwendungszweck")
            #expect(response.status == 201, "\(response.text)")
            #expect(
                try await app.transactionRows() == [
                    ["2", "Miete; Dezember", "1234.56", "2026-12-31", "null", "csv:2026-12-31:-123456:1"],
                    ["2", "Gehalt", "-2500.00", "2026-02-01", "null", "csv:2026-02-01:250000:1"],
                    ["2", "Kaffee", "3.20", "2026-02-05", "null", "csv:2026-02-05:-320:1"],
                ])
        }
    }

    @Test func aByteOrderMarkQuotedLineBreaksAndCRLFAreRead() async throws {
        try await TestApp.withStatementCategories { app in
            let text =
                "Date,AMOUNT,Title,Category,Note,importId\r\n"
                + "2026-11-05,-1.00,\"Two\r\nlines, a comma and a \"\"quote\"\"\",Groceries,,bank-1\r\n"
                + "2026-11-06,2.00,Plain,Rent,\"note\nhere\",bank-2\r\n"
            let response = try await app.importStatement(CSVBytes.byteOrderMark + Array(text.utf8))
            #expect(response.status == 201, "\(response.text)")
            #expect(
                try await app.transactionRows() == [
                    ["1", "Two\r\nlines, a comma and a \"quote\"", "1.00", "2026-11-05", "null", "bank-1"],
                    ["2", "Plain", "-2.00", "2026-11-06", "note\nhere", "bank-2"],
                ])
        }
    }

    @Test func aDryRunAnswersWithoutWriting() async throws {
        try await TestApp.withStatementCategories { app in
            _ = try await app.importStatement("date,amount,title,category\n2026-11-01,-1.00,Old,1\n")
            let statement = "date,amount,title,category\n2026-11-01,-1.00,Old,1\n2026-11-02,-2.00,New,1\n"
            let dryRun = try await app.importStatement(statement, query: "?dryRun=true")
            #expect(dryRun.status == 200, "\(dryRun.text)")
            #expect(dryRun.object["created"] as? Int == 1)
            #expect(dryRun.object["duplicateImportIds"] as? [String] == ["csv:2026-11-01:-100:1"])
            #expect(dryRun.object["dryRun"] as? Bool == true)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "1")
            let real = try await app.importStatement(statement)
            #expect(real.object["created"] as? Int == 1)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "2")
        }
    }

    @Test func anInvalidRowImportsNothingAndEveryBadCellIsNamed() async throws {
        try await TestApp.withStatementCategories { app in
            let statement = """
                date,amount,title,category
                2026-11-01,-1.00,Fine,1
                2026-13-01,-1.00,Bad month,1
                2026-11-02,1.001,,1
                2026-11-03,5.00,No such category,Travel
                """
            let response = try await app.importStatement(statement)
            #expect(response.status == 422, "\(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
            let errors = (response.object["errors"] as? [[String: Any]] ?? []).map { "\($0["line"] ?? "")/\($0["column"] ?? "")" }
            #expect(errors == ["3/date", "4/title", "4/amount"], "\(response.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")

            // A category that does not exist is found once the cells are valid; still nothing is written.
            let unknown = try await app.importStatement("date,amount,title,category\n2026-11-01,1,A,1\n2026-11-03,5.00,B,Travel\n")
            #expect(unknown.status == 422)
            #expect((unknown.object["errors"] as? [[String: Any]])?.first?["line"] as? Int == 3)
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
        }
    }

    @Test(arguments: [
        ("date,amount\n2026-11-01,1\n", 1, "title"),
        ("date,amount,title,category\n2026-11-01,1,A,1\n2026-11-02,2,\"B,1\n", 3, ""),
        ("date,amount,title,category\n2026-11-01,1,A,1\n2026-11-02,2,B\n", 3, ""),
        ("date,amount,title,category\n2026-11-01,1,\"A\"x,1\n", 2, ""),
        ("date,amount,title,category,importId\n2026-11-01,1,A,1,\(String(repeating: "i", count: 101))\n", 2, "importId"),
        ("date,amount,title,category\n2026-11-01,1,A\u{0}B,1\n", 2, ""),
    ])
    func aMalformedStatementIs422NamingTheLine(statement: String, line: Int, column: String) async throws {
        try await TestApp.withStatementCategories { app in
            let response = try await app.importStatement(statement)
            #expect(response.status == 422, "\(response.text)")
            let first = (response.object["errors"] as? [[String: Any]])?.first
            #expect(first?["line"] as? Int == line, "\(response.text)")
            #expect(first?["column"] as? String == column, "\(response.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")
        }
    }

    @Test func otherMediaTypesAndOversizedStatementsAreRefused() async throws {
        try await TestApp.withStatementCategories { app in
            let plain = try await app.importStatement("date,amount,title,category\n", contentType: "text/plain")
            #expect(plain.status == 415)
            let latin1 = try await app.importStatement("date,amount,title,category\n", contentType: "text/csv; charset=iso-8859-1")
            #expect(latin1.status == 415)
            let notUTF8 = try await app.importStatement(Array("date,amount,title,category\n2026-11-01,1,".utf8) + [0xE9] + Array(",1\n".utf8))
            #expect(notUTF8.status == 422)

            // The head alone says the body is too large: the answer comes before any of it is sent.
            for (path, limit) in [("/transactions/import", 16 * 1024 * 1024), ("/transactions", 1024 * 1024)] {
                let answer = try await runOffCooperativePool { [port = app.port] in
                    let client = try TestClient(port: port, timeout: .seconds(30))
                    defer { client.close() }
                    try client.send("POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/csv\r\nContent-Length: \(limit + 1)\r\n\r\n")
                    return try client.readResponse()
                }
                #expect(answer.status == 413, "\(path)")
            }
            // A statement over the 1 MiB that other routes take is fine here.
            var big = "date,amount,title,category\n"
            for index in 0..<30_000 { big += "2026-11-01,-1.00,Row \(index) with a fairly long title,1\n" }
            #expect(big.utf8.count > 1024 * 1024)
            let accepted = try await app.importStatement(big)
            #expect(accepted.status == 201, "\(accepted.text.prefix(300))")
            #expect(accepted.object["created"] as? Int == 30_000)
        }
    }

    @Test func aFormulaTitleImportsAsTextAndAnExportsQuoteIsDropped() async throws {
        try await TestApp.withStatementCategories { app in
            let statement = "date,amount,title,category,note\n2026-11-01,1,=SUM(A1),1,'-minus\n2026-11-02,1,'=HYPERLINK(x),1,'plain\n"
            let response = try await app.importStatement(statement)
            #expect(response.status == 201, "\(response.text)")
            let rows = try await app.transactionRows()
            #expect(rows.map { $0[1] } == ["=SUM(A1)", "=HYPERLINK(x)"])
            // Only a quote before a formula character is an export's: `'plain` stays as written.
            #expect(rows.map { $0[4] } == ["-minus", "'plain"])
        }
    }

    @Test func twoImportsOfOneFileRacingCreateEachRowOnce() async throws {
        try await TestApp.withStatementCategories { app in
            var statement = "date,amount,title,category\n"
            for index in 0..<6000 { statement += "2026-11-\(index % 28 + 1),-\(index % 90 + 1).00,Row \(index),Groceries\n" }
            let bytes = Array(statement.utf8)
            async let first = app.importStatement(bytes)
            async let second = app.importStatement(bytes)
            let answers = try await [first, second]
            #expect(answers.allSatisfy { $0.status == 201 || $0.status == 200 }, "\(answers.map(\.status))")
            let created = answers.map { $0.object["created"] as? Int ?? -1 }
            let duplicates = answers.map { $0.object["duplicates"] as? Int ?? -1 }
            #expect(created.reduce(0, +) == 6000, "created \(created)")
            #expect(zip(created, duplicates).allSatisfy { $0 + $1 == 6000 })
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "6000")
            #expect(try await app.scalar("SELECT count(DISTINCT import_id) FROM transactions") == "6000")
        }
    }

    @Test func aJSONStatementCountsItsItemsFromOne() async throws {
        try await TestApp.withStatementCategories { app in
            let body =
                #"[{"date":"2026-11-01","amount":"-4.00","title":"Tea","category":"rent"},{"date":"2026-11-01","amount":-4,"title":"Tea","categoryId":1,"importId":"own-1"}]"#
            let response = try await app.importStatement(body, contentType: "application/json")
            #expect(response.status == 201, "\(response.text)")
            #expect(try await app.transactionRows().map { [$0[0], $0[5]] } == [["2", "csv:2026-11-01:-400:1"], ["1", "own-1"]])
            let invalid = try await app.importStatement(
                #"[{"date":"2026-11-01","amount":1,"title":"ok","categoryId":1},{"date":"x","amount":1,"title":"t","categoryId":1}]"#,
                contentType: "application/json")
            #expect(invalid.status == 422)
            let first = (invalid.object["errors"] as? [[String: Any]])?.first
            #expect(first?["line"] as? Int == 2)
            #expect(first?["column"] as? String == "date")
        }
    }

    @Test func anImportTakesAnIdempotencyKey() async throws {
        try await TestApp.withStatementCategories { app in
            let statement = "date,amount,title,category\n2026-11-01,-1.00,Once,1\n"
            let key = [("Idempotency-Key", "import-\(UUID().uuidString)")]
            let first = try await app.importStatement(statement, headers: key)
            let retry = try await app.importStatement(statement, headers: key)
            #expect(first.status == 201)
            #expect(retry.status == 201, "the retry replays the first answer, not a second import's 200")
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.body == first.body)
        }
    }

    /// docs/import.md: what `GET /transactions` exports as CSV imports into another database with the same
    /// categories (under other ids: matched by title) as the same transactions, and a second import creates none.
    @Test func anExportImportsIntoAnotherDatabaseAsTheSameTransactions() async throws {
        try await TestApp.with { source in
            try await TestApp.with { target in
                _ = try await source.request(
                    "POST", "/categories", json: #"[{"title":"Groceries","amount":400},{"title":"Rent, flat","amount":1000}]"#)
                _ = try await target.request(
                    "POST", "/categories",
                    json: #"[{"title":"Unused","amount":1},{"title":"rent, FLAT","amount":1},{"title":"groceries","amount":1}]"#)
                let writes = [
                    #"{"categoryId":1,"title":"Bakery","amount":-12.5,"date":"2026-11-03"}"#,
                    #"{"categoryId":1,"title":"Bakery","amount":"-12.50","date":"2026-11-03","note":"second loaf"}"#,
                    #"{"categoryId":2,"title":"=SUM(A1)","amount":-900,"date":"2026-11-01","note":"-standing, \"order\"\nline two","importId":"bank-77"}"#,
                    #"{"categoryId":2,"title":"@home +tab\t","amount":12.34,"date":"2026-10-31","importId":"=x"}"#,
                    #"{"categoryId":1,"title":"'=already quoted","amount":1,"date":"2026-11-02"}"#,
                ]
                for body in writes { #expect(try await source.request("POST", "/transactions", json: body).status == 201) }
                let export = try await source.request("GET", "/transactions", headers: [("Accept", "text/csv")])
                #expect(export.status == 200)
                #expect(export.header("Content-Type")?.hasPrefix("text/csv") == true)

                // An export's amounts are this API's, spending positive: `?amounts=budget` reads them so.
                let first = try await target.importStatement(export.body, query: "?amounts=budget")
                #expect(first.status == 201, "\(first.text)")
                #expect(first.object["created"] as? Int == writes.count)
                let exported = try await source.transactionRows(category: "lower(c.title)")
                let imported = try await target.transactionRows(category: "lower(c.title)")
                #expect(imported.count == exported.count)
                for (was, now) in zip(exported, imported) {
                    #expect(Array(now.prefix(5)) == Array(was.prefix(5)), "category, title, amount, date and note survive the round trip")
                    if was[5] != "null" { #expect(now[5] == was[5], "an importId survives the round trip") }
                }
                let again = try await target.importStatement(export.body, query: "?amounts=budget")
                #expect(again.status == 200, "\(again.text)")
                #expect(again.object["created"] as? Int == 0)
                // Read as a bank's statement instead, every amount would turn: the same ids, so nothing is written.
                let asBank = try await target.importStatement(export.body)
                #expect(asBank.status == 200, "\(asBank.text)")
                #expect(try await target.transactionRows(category: "lower(c.title)") == imported)
            }
        }
    }

    /// README.md, "Importing a bank statement", after the walk before it: the example statement's money out is
    /// spending (November's figures are the README's table), and a second import creates nothing.
    @Test func theReadmesStatementImportsAsSpendingOnceThenOnlyDuplicates() async throws {
        let readme = try ReadmeCommand.readme()
        let walk = try #require(readme.range(of: "## A walk through with curl"))
        let section = try #require(readme.range(of: "## Importing a bank statement"))
        let sectionEnd = try #require(readme.range(of: "\n## ", range: section.upperBound..<readme.endIndex)).lowerBound
        let text = readme[section.upperBound..<sectionEnd]
        let answers = text.components(separatedBy: "```json\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        try #require(answers.count == 2)
        let table = text.split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| category") }
            .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        try #require(table.count == 3)
        let commands = try ReadmeCommand.commands(in: text)
        try #require(commands.count == 3)
        let walkWrites = try ReadmeCommand.commands(in: readme[walk.upperBound..<section.lowerBound]).filter { $0.method != "GET" }
        try #require(walkWrites.count >= 5, "the walk's writes were found")

        try await TestApp.with { app in
            for command in walkWrites + [commands[0]] {
                let response = try await app.send(command)
                #expect(response.status < 500, "\(command.method) \(command.target): \(response.text)")
            }
            let first = try await app.send(commands[1])
            #expect(first.status == 201)
            #expect(first.text == answers[0])
            let november = try await app.request("GET", "/categories?month=2026-11").json() as? [[String: Any]] ?? []
            let figures = november.map { category in
                [category["title"] as? String ?? ""]
                    + ["budgeted", "spent", "remaining"].map { String(format: "%.2f", category[$0] as? Double ?? .nan) }
            }
            #expect(figures == table, "README's table against the server's answer")
            let second = try await app.send(commands[2])
            #expect(second.status == 200)
            #expect(second.text == answers[1])
            #expect(
                try await app.scalar("SELECT string_agg(title || ' ' || amount, '|' ORDER BY id) FROM transactions WHERE import_id IS NOT NULL")
                    == #"Supermarket 42.30|November rent 1200.00|Bakery 12.50|Bakery 12.50|Pizza "Roma" 64.80"#)
        }
    }

    @Test func unknownParametersAndBadOptionsAre400() async throws {
        try await TestApp.withStatementCategories { app in
            for query in [
                "?delimter=;", "?dateFormat=YYYY", "?decimal=;", "?category=abc", "?dryRun=yes", "?columns=date",
                "?amounts=positive", "?amounts=bank&amounts=budget", "?columns=amount:Betrag,outflow:Soll",
            ] {
                let response = try await app.importStatement("date,amount,title,category\n", query: query)
                #expect(response.status == 400, "\(query): \(response.text)")
            }
        }
    }
}

/// The `importId` member of every transaction write (docs/import.md).
@Suite struct ImportIDTests {
    @Test func aTakenImportIdIs409NamingTheRecordThatHoldsIt() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            let created = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"x","amount":1,"importId":"bank-7"}"#)
            #expect(created.status == 201)
            #expect(created.object["importId"] as? String == "bank-7")
            let plain = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"y","amount":1}"#)
            #expect(plain.text.contains(#""note":null,"importId":null,"#))

            let again = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"z","amount":1,"importId":"bank-7"}"#)
            #expect(again.status == 409)
            #expect(again.header("Location") == "/transactions/1")
            #expect(again.problemFields == ["importId"])
            let put = try await app.request("PUT", "/transactions/2", json: #"{"categoryId":1,"title":"y","amount":1,"importId":"bank-7"}"#)
            #expect(put.status == 409)
            #expect(put.header("Location") == "/transactions/1")
            let patch = try await app.request("PATCH", "/transactions/2", json: #"{"importId":"bank-7"}"#)
            #expect(patch.status == 409)
            #expect(patch.header("Location") == "/transactions/1")
            // The record that holds it may write it again.
            #expect(try await app.request("PATCH", "/transactions/1", json: #"{"importId":"bank-7","title":"x2"}"#).status == 200)
            let batch = try await app.request(
                "POST", "/batch",
                json: #"{"operations":[{"method":"POST","path":"/transactions","body":{"categoryId":1,"title":"b","amount":1,"importId":"bank-7"}}]}"#
            )
            let result = (batch.object["results"] as? [[String: Any]])?.first
            #expect(result?["status"] as? Int == 409, "\(batch.text)")
            #expect((result?["headers"] as? [String: String])?["Location"] == "/transactions/1", "\(batch.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "2")
            let tooLong = try await app.request(
                "POST", "/transactions", json: #"{"categoryId":1,"title":"z","amount":1,"importId":"\#(String(repeating: "i", count: 101))"}"#)
            #expect(tooLong.status == 422)
            #expect(tooLong.problemFields == ["importId"])
        }
    }

    @Test func aPutWithoutImportIdKeepsItAndADeleteFreesIt() async throws {
        try await TestApp.with { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"x","amount":1,"importId":"bank-1"}"#)
            let replaced = try await app.request("PUT", "/transactions/1", json: #"{"categoryId":1,"title":"renamed","amount":2}"#)
            #expect(replaced.object["importId"] as? String == "bank-1", "a client that predates importId keeps it")
            let cleared = try await app.request("PUT", "/transactions/1", json: #"{"categoryId":1,"title":"renamed","amount":2,"importId":null}"#)
            #expect(cleared.object["importId"] is NSNull)
            _ = try await app.request("PATCH", "/transactions/1", json: #"{"importId":"bank-1"}"#)
            #expect(try await app.request("DELETE", "/transactions/1").status == 200)
            let reimported = try await app.request("POST", "/transactions", json: #"{"categoryId":1,"title":"back","amount":1,"importId":"bank-1"}"#)
            #expect(reimported.status == 201, "a deleted transaction frees its importId")
        }
    }
}

enum CSVBytes {
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
}
