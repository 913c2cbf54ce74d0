@testable import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport
import BudgetCore

/// Lists as CSV over real sockets (docs/api.md, CSV): `Accept: text/csv` on `/transactions`,
/// `/categories/:id/transactions` and `/categories` answers the records the JSON list answers, with the same
/// filters, order, pages and headers; text cells quoted and defused, money never; a list over the probe read
/// through the cursor; a weak tag of its own; `_embed`/`_expand` refused.
@Suite struct CSVListTests {
    static let csv = [("Accept", "text/csv")]

    /// Two categories and transactions whose titles and notes need quoting or defusing.
    private static func seed(_ app: TestApp) async throws {
        _ = try await app.request(
            "POST", "/categories", json: #"[{"title":"Groceries","amount":400},{"title":"=Rent, \"flat\"","amount":950,"rollover":true}]"#)
        let created = try await app.request(
            "POST", "/transactions",
            json: """
                [{"categoryId":1,"title":"Milk","amount":3.49,"date":"2026-11-02"},
                 {"categoryId":1,"title":"Weekly shop","amount":"119.96","date":"2026-11-09","note":"market, \\"north\\"\\nsecond line"},
                 {"categoryId":1,"title":"=SUM(A1)","amount":-12.5,"date":"2026-11-16","note":"-x"},
                 {"categoryId":2,"title":"@x","amount":950,"date":"2026-11-01","note":"+x"},
                 {"categoryId":2,"title":"\\tx","amount":-100,"date":"2026-11-20","note":"\\rx"}]
                """)
        #expect(created.status == 201)
        // The seed's changes get their seqs a moment after its answers (docs/change-feed.md); /changes catches
        // up before it answers, so the lists below all see one X-Sync-Seq instead of racing the sequencer.
        #expect(try await app.request("GET", "/changes?since=0").status == 200)
    }

    /// What a list's CSV must be, made from the same list's JSON: the header row, then each record's members
    /// in `columns` order, `category` being its category's title from `categories`.
    static func expectedCSV(json body: [UInt8], columns: [String], categories: [String: String] = [:]) throws -> String {
        guard case .array(let records) = try JSONParser.parse(body) else { throw CSVTestFailure.notAnArray }
        var lines = [columns.joined(separator: ",")]
        for case .object(let record) in records {
            lines.append(
                columns.map { name in
                    if name == "category", case .number(let id) = record["categoryId"] { return categories[id].map(textCell) ?? "" }
                    return switch record[name] {
                    case .number(let text): text
                    case .string(let text): textCell(text)
                    case .bool(let value): "\(value)"
                    case .null, nil: ""
                    case .array, .object: "nested"
                    }
                }.joined(separator: ","))
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// A text cell as docs/api.md says: `'` before a formula's first character, quoted when it holds `,`, `"`, CR or LF.
    static func textCell(_ text: String) -> String {
        let defused = ["=", "+", "-", "@", "\t", "\r"].contains { text.hasPrefix($0) } ? "'" + text : text
        guard defused.contains(where: { [",", "\"", "\r", "\n", "\r\n"].contains($0) }) else { return defused }
        return "\"" + defused.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    enum CSVTestFailure: Error { case notAnArray }

    /// The categories' titles by id, as JSON numbers' text.
    static func categoryTitles(_ app: TestApp) async throws -> [String: String] {
        guard case .array(let records) = try JSONParser.parse(try await app.request("GET", "/categories").body) else {
            throw CSVTestFailure.notAnArray
        }
        var titles: [String: String] = [:]
        for case .object(let record) in records {
            if case .number(let id) = record["id"], case .string(let title) = record["title"] { titles[id] = title }
        }
        return titles
    }

    /// Whether the answer's `Vary` names `Accept` (CORS adds `Origin` to it as well).
    static func variesByAccept(_ response: TestResponse) -> Bool {
        response.headers.contains {
            $0.name.lowercased() == "vary" && $0.value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "Accept" }
        }
    }

    static let transactionColumns = [
        "id", "categoryId", "category", "title", "amount", "date", "note", "importId", "accountId", "cleared", "payee", "transferId", "parentId",
        "splits", "createdAt",
        "updatedAt", "version",
    ]

    @Test func csvListsAnswerTheRecordsAndHeadersOfTheirJSON() async throws {
        try await TestApp.with { app in
            try await Self.seed(app)
            let titles = try await Self.categoryTitles(app)
            let categoryColumns = CategoryRecord.shape.fields.map(\.name)
            let monthColumns = CategoryRecord.monthShape.fields.map(\.name)
            let cases: [(path: String, columns: [String])] = [
                ("/transactions", Self.transactionColumns),
                ("/transactions?categoryId=1&amount_lt=100", Self.transactionColumns),
                ("/transactions?_sort=-amount,title", Self.transactionColumns),
                ("/transactions?q=milk", Self.transactionColumns),
                ("/transactions?_page=2&_limit=2", Self.transactionColumns),
                ("/transactions?_start=1&_end=3", Self.transactionColumns),
                ("/transactions?title=nothing", Self.transactionColumns),
                ("/categories/2/transactions?_sort=date", Self.transactionColumns),
                ("/categories", categoryColumns),
                ("/categories?_sort=-title&_limit=1", categoryColumns),
                ("/categories?month=2026-11", monthColumns),
            ]
            for (path, columns) in cases {
                let json = try await app.request("GET", path)
                let csv = try await app.request("GET", path, headers: Self.csv)
                #expect(json.status == 200 && csv.status == 200, "\(path)")
                #expect(csv.header("Content-Type") == "text/csv; charset=utf-8", "\(path)")
                #expect(json.header("Content-Type") == "application/json; charset=utf-8", "\(path)")
                #expect(Self.variesByAccept(csv) && Self.variesByAccept(json), "\(path)")
                #expect(csv.header("Vary") == "Accept, Origin", "one field line, CORS's Origin after it: \(path)")
                for name in ["X-Total-Count", "Link", "X-Sync-Seq"] {
                    #expect(csv.header(name) == json.header(name), "\(path): \(name)")
                }
                #expect(csv.text == (try Self.expectedCSV(json: json.body, columns: columns, categories: titles)), "\(path)")
                #expect(csv.header("ETag").map { $0.hasPrefix("\"") } == true, "a small answer has a strong tag of its bytes: \(path)")
                #expect(csv.header("ETag") != json.header("ETag"), "\(path)")
            }
            // A renamed category's title shows in the next export: the titles are read with each answer.
            _ = try await app.request("PATCH", "/categories/1", json: #"{"title":"Food"}"#)
            let renamed = try await app.request("GET", "/transactions?categoryId=1&_limit=1", headers: Self.csv)
            #expect(renamed.text.components(separatedBy: "\r\n")[1].hasPrefix("1,1,Food,Milk,"))
            let paged = try await app.request("GET", "/transactions?_page=2&_limit=2", headers: Self.csv)
            #expect(paged.header("X-Total-Count") == "5")
            #expect(paged.header("Link")?.contains("rel=\"next\"") == true)
            // The 1.x envelope: CSV holds the rows alone, the same rows as the envelope's data.
            let envelope = try await app.request("GET", "/transactions?_page=2&_per_page=2", headers: Self.csv)
            let page = try await app.request("GET", "/transactions?_page=2&_limit=2", headers: Self.csv)
            #expect(envelope.status == 200 && envelope.text == page.text)
            // JSON stays the default: no Accept, */*, or a preference for JSON.
            for accept in ["*/*", "application/json", "text/csv;q=0.5, application/json", "text/html"] {
                let answer = try await app.request("GET", "/transactions", headers: [("Accept", accept)])
                #expect(answer.header("Content-Type") == "application/json; charset=utf-8", "\(accept)")
            }
            // Lists that offer JSON alone answer it whatever Accept asks, with no Vary.
            let budgets = try await app.request("GET", "/budgets", headers: Self.csv)
            #expect(budgets.status == 200 && budgets.header("Content-Type") == "application/json; charset=utf-8" && !Self.variesByAccept(budgets))
        }
    }

    @Test func textCellsAreQuotedAndDefusedAndMoneyIsNot() async throws {
        try await TestApp.with { app in
            try await Self.seed(app)
            let csv = try await app.request("GET", "/transactions?_sort=id", headers: Self.csv)
            let rows = csv.text.components(separatedBy: "\r\n")
            #expect(
                rows.first
                    == "id,categoryId,category,title,amount,date,note,importId,accountId,cleared,payee,transferId,parentId,splits,createdAt,updatedAt,version"
            )
            #expect(rows.last == "", "every record ends with CRLF")
            let timestamp = #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z,\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z,1/#
            #expect(rows[1].hasPrefix("1,1,Groceries,Milk,3.49,2026-11-02,,"))
            #expect(rows[1].hasSuffix(",1"))
            #expect(try timestamp.firstMatch(in: rows[1]) != nil, "timestamps as JSON writes them")
            // A quoted LF stays inside its cell; only CRLF ends a record.
            #expect(rows[2].hasPrefix("2,1,Groceries,Weekly shop,119.96,2026-11-09,\"market, \"\"north\"\"\nsecond line\","))
            #expect(rows[3].hasPrefix("3,1,Groceries,'=SUM(A1),-12.50,2026-11-16,'-x,"), "money is never prefixed; text is")
            #expect(rows[4].hasPrefix(#"4,2,"'=Rent, ""flat""",'@x,950.00,2026-11-01,'+x,"#))
            #expect(rows.count == 7)
            #expect(rows[5].hasPrefix("5,2,\"'=Rent, \"\"flat\"\"\",'\tx,-100.00,2026-11-20,\"'\rx\","))
            let categories = try await app.request("GET", "/categories", headers: Self.csv)
            let lines = categories.text.components(separatedBy: "\r\n")
            #expect(lines[0] == "id,title,amount,rollover,spent,remaining,createdAt,updatedAt,version")
            #expect(lines[1].hasPrefix("1,Groceries,400.00,false,110.95,289.05,"))
            #expect(lines[2].hasPrefix(#"2,"'=Rent, ""flat""",950.00,true,850.00,100.00,"#))
            let month = try await app.request("GET", "/categories?month=2026-11&id=2", headers: Self.csv)
            #expect(month.text.components(separatedBy: "\r\n")[1].hasPrefix(#"2,"'=Rent, ""flat""",950.00,true,2026-11,"#))
        }
    }

    /// Over `ListAnswer.probeRows` records the list is read through the cursor: its CSV is its pages' rows
    /// under one header; over 256 KiB it is chunked with a weak tag of its own, which answers 304 to CSV only.
    @Test func aLargeCSVListIsItsPagesWithAWeakTagOfItsOwn() async throws {
        try await TestApp.with { app in
            _ = try await app.scalar("INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'Food', 100), (1, '=Rent', 900)")
            _ = try await app.scalar(
                """
                INSERT INTO transactions (ledger_id, category_id, title, amount, date, note)
                SELECT 1, 1 + i % 2, CASE WHEN i % 7 = 0 THEN '=cell ' ELSE 'purchase, number ' END || i,
                       -(i % 1000) / 10.0, DATE '2026-01-01' + i % 300, repeat('n', 150)
                FROM generate_series(1, 1500) AS i
                """)
            let whole = try await app.request("GET", "/transactions", headers: Self.csv)
            #expect(whole.status == 200 && whole.isChunked, "1500 rows of ~250 bytes are over 256 KiB")
            #expect(whole.header("Content-Type") == "text/csv; charset=utf-8" && Self.variesByAccept(whole))
            let json = try await app.request("GET", "/transactions")
            #expect(whole.text == (try Self.expectedCSV(json: json.body, columns: Self.transactionColumns, categories: ["1": "Food", "2": "=Rent"])))
            var rows: [Substring] = []
            var header: Substring = ""
            for page in 1...2 {
                let answer = try await app.request("GET", "/transactions?_page=\(page)&_limit=1000", headers: Self.csv)
                #expect(answer.status == 200 && answer.header("X-Total-Count") == "1500")
                let lines = answer.text.split(separator: "\r\n")
                header = lines[0]
                rows += lines.dropFirst()
            }
            #expect(whole.text == ([header] + rows).map { $0 + "\r\n" }.joined())
            let tag = try #require(whole.header("ETag"))
            #expect(tag.hasPrefix("W/\""))
            let jsonTag = try #require(json.header("ETag"))
            #expect(jsonTag != tag)
            let again = try await app.request("GET", "/transactions", headers: Self.csv + [("If-None-Match", tag)])
            #expect(again.status == 304 && again.body.isEmpty && Self.variesByAccept(again))
            #expect(try await app.request("GET", "/transactions", headers: Self.csv + [("If-None-Match", jsonTag)]).status == 200)
            #expect(try await app.request("GET", "/transactions", headers: [("If-None-Match", tag)]).status == 200)
            // The nested list goes the same way, with its own category's rows.
            let nested = try await app.request("GET", "/categories/2/transactions", headers: Self.csv)
            #expect(nested.status == 200 && nested.text.split(separator: "\r\n").count == 751)
            #expect(nested.text.split(separator: "\r\n").dropFirst().allSatisfy { $0.contains(",2,'=Rent,") })
        }
    }

    @Test func nestedRecordsAreRefusedWithCSV() async throws {
        try await TestApp.with { app in
            try await Self.seed(app)
            for path in ["/categories?_embed=transactions", "/transactions?_expand=category", "/categories/1/transactions?_expand=category"] {
                let refused = try await app.request("GET", path, headers: Self.csv)
                #expect(refused.status == 400, "\(path)")
                #expect(refused.header("Content-Type") == "application/problem+json", "\(path)")
                #expect(refused.text.contains("CSV"), "\(path)")
                #expect(try await app.request("GET", path).status == 200, "\(path) as JSON")
            }
        }
    }

    /// The one place CSV is quoted (pure logic).
    @Test func quotingAndDefusing() {
        func text(_ value: String) -> String {
            var output: [UInt8] = []
            var value = value
            value.withUTF8 { CSVText.appendText(UnsafeRawBufferPointer($0), to: &output) }
            return String(decoding: output, as: UTF8.self)
        }
        #expect(text("plain") == "plain")
        #expect(text("") == "")
        #expect(text("a,b") == #""a,b""#)
        #expect(text(#"say "hi""#) == #""say ""hi""""#)
        #expect(text("a\nb") == "\"a\nb\"")
        #expect(text("=1+2") == "'=1+2")
        #expect(text("-1") == "'-1")
        #expect(text("=a,b") == #""'=a,b""#)
        #expect(text("\r") == "\"'\r\"")
        #expect(text("x=1") == "x=1")
        var header: [UInt8] = []
        CSVText.appendRecord(["id", "a,b"], to: &header)
        #expect(header == Array("id,\"a,b\"\r\n".utf8))
    }
}
