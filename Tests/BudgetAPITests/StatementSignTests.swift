import Foundation
import Testing
import TestSupport
import APITestSupport
import BudgetCore

/// Which way an import reads a statement's money (docs/import.md, "Money out, money in"): a bank's money out
/// is spending, outflow and inflow columns say the direction themselves, and `?amounts=budget` reads amounts
/// as this API writes them.
@Suite struct StatementSignTests {
    private static func spent(_ app: TestApp, category: Int) async throws -> Any? {
        try await app.request("GET", "/categories/\(category)").object["spent"]
    }

    @Test func moneyOutIsSpendingAndMoneyInARefund() async throws {
        try await TestApp.withStatementCategories { app in
            let statement = "date,amount,title,category\n2026-11-01,-42.30,Supermarket,Groceries\n2026-11-02,5.00,Bottle deposit,Groceries\n"
            let response = try await app.importStatement(statement)
            #expect(response.status == 201, "\(response.text)")
            #expect(try await app.transactionRows().map { $0[2] } == ["42.30", "-5.00"])
            #expect(try await Self.spent(app, category: 1) as? Double == 37.30)
            // `?amounts=bank` says the default out loud.
            let explicit = try await app.importStatement(statement, query: "?amounts=bank&dryRun=true")
            #expect(explicit.object["created"] as? Int == 0, "the same ids: \(explicit.text)")
        }
    }

    @Test func budgetAmountsAreReadAsThisAPIWritesThem() async throws {
        try await TestApp.withStatementCategories { app in
            let statement = "date,amount,title,category\n2026-11-01,42.30,Supermarket,Groceries\n2026-11-02,-5.00,Bottle deposit,Groceries\n"
            let response = try await app.importStatement(statement, query: "?amounts=budget")
            #expect(response.status == 201, "\(response.text)")
            #expect(
                try await app.transactionRows().map { [$0[2], $0[5]] } == [["42.30", "csv:2026-11-01:4230:1"], ["-5.00", "csv:2026-11-02:-500:1"]])
        }
    }

    /// A JSON statement's rows are transaction bodies: this API's sense unless `?amounts=bank` says otherwise.
    @Test func jsonRowsKeepTheAPIsSenseUnlessToldOtherwise() async throws {
        try await TestApp.withStatementCategories { app in
            let spending = #"[{"date":"2026-11-01","amount":"12.00","title":"Lunch","categoryId":1}]"#
            let first = try await app.importStatement(spending, contentType: "application/json")
            #expect(first.status == 201, "\(first.text)")
            let bank = #"[{"date":"2026-11-02","amount":"-7.00","title":"Dinner","categoryId":1}]"#
            let second = try await app.importStatement(bank, query: "?amounts=bank", contentType: "application/json")
            #expect(second.status == 201, "\(second.text)")
            let rows = try await app.transactionRows().map { [$0[2], $0[5]] }
            #expect(rows == [["12.00", "csv:2026-11-01:1200:1"], ["7.00", "csv:2026-11-02:-700:1"]])
        }
    }

    @Test func outflowAndInflowColumnsSayTheDirection() async throws {
        try await TestApp.withStatementCategories { app in
            // Found by their header names; a 0 in the column a row does not use counts as empty.
            let named = """
                Date,Title,Outflow,Inflow,Category
                2026-11-01,Supermarket,42.30,,Groceries
                2026-11-02,Refund,,5.00,Groceries
                2026-11-03,Rent,1000.00,0.00,Rent
                2026-11-04,Nothing moved,0,0,Rent
                """
            let first = try await app.importStatement(named)
            #expect(first.status == 201, "\(first.text)")
            // Mapped by `?columns=`, with a German bank's numbers; its Betrag column is ignored.
            let mapped = """
                Buchungstag;Text;Betrag;Soll;Haben;Kategorie
                05.11.2026;Miete;-1.234,56;1.234,56;;2
                06.11.2026;Erstattung;20,00;;20,00;1
                """
            let second = try await app.importStatement(
                mapped,
                query:
                    "?delimiter=%3B&decimal=,&dateFormat=DD.MM.YYYY&columns=date:Buchungstag,title:Text,outflow:Soll,inflow:Haben,category:Kategorie")
            #expect(second.status == 201, "\(second.text)")
            // The derived ids carry the bank's signed amount, as a one-column statement of the same rows would.
            #expect(
                try await app.transactionRows().map { [$0[1], $0[2], $0[5]] } == [
                    ["Supermarket", "42.30", "csv:2026-11-01:-4230:1"],
                    ["Refund", "-5.00", "csv:2026-11-02:500:1"],
                    ["Rent", "1000.00", "csv:2026-11-03:-100000:1"],
                    ["Nothing moved", "0.00", "csv:2026-11-04:0:1"],
                    ["Miete", "1234.56", "csv:2026-11-05:-123456:1"],
                    ["Erstattung", "-20.00", "csv:2026-11-06:2000:1"],
                ])
            let oneColumn = "date,amount,title,category\n2026-11-01,-42.30,Supermarket,Groceries\n2026-11-02,5.00,Refund,Groceries\n"
            let again = try await app.importStatement(oneColumn)
            #expect(again.object["duplicates"] as? Int == 2, "\(again.text)")
        }
    }

    @Test func aRowWithBothOrNeitherColumnFilledIs422NamingItsLine() async throws {
        try await TestApp.withStatementCategories { app in
            let statement = """
                date,title,outflow,inflow,category
                2026-11-01,Fine,1.00,,1
                2026-11-02,Both,3.00,4.00,1
                2026-11-03,Neither,,,1
                2026-11-04,Negative,-2.00,,1
                2026-11-05,Not a number,,abc,1
                """
            let response = try await app.importStatement(statement)
            #expect(response.status == 422, "\(response.text)")
            let errors = (response.object["errors"] as? [[String: Any]] ?? []).map { "\($0["line"] ?? "")/\($0["column"] ?? "")" }
            #expect(errors == ["3/outflow", "4/outflow", "5/outflow", "6/inflow"], "\(response.text)")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "0")

            // Only one of the two columns is no statement: line 1 names the missing one.
            let half = try await app.importStatement("date,title,outflow,category\n2026-11-01,A,1.00,1\n")
            #expect(half.status == 422)
            let first = (half.object["errors"] as? [[String: Any]])?.first
            #expect(first?["line"] as? Int == 1)
            #expect(first?["column"] as? String == "inflow", "\(half.text)")
            let none = try await app.importStatement("date,title,category\n2026-11-01,A,1\n")
            #expect(((none.object["errors"] as? [[String: Any]])?.first?["message"] as? String)?.contains("outflow") == true, "\(none.text)")
        }
    }

    /// Rows a statement created before it was read in the bank's sense keep their ids: importing it again
    /// creates nothing, and docs/import.md's SQL turns their sign once, however often it runs.
    @Test func rowsImportedBeforeTheFixAreDuplicatesAndTheDocsSQLMendsThem() async throws {
        let guide = try String(contentsOf: ReadmeCommand.root.appendingPathComponent("docs/import.md"), encoding: .utf8)
        let section = try #require(guide.range(of: "## Rows imported before"))
        let sectionEnd = guide.range(of: "\n## ", range: section.upperBound..<guide.endIndex)?.lowerBound ?? guide.endIndex
        let mend = try #require(
            guide[section.upperBound..<sectionEnd].components(separatedBy: "```sql\n").last?.components(separatedBy: "\n```").first)
        try #require(mend.contains("UPDATE transactions"))
        try await TestApp.withStatementCategories { app in
            let statement = "date,amount,title,category\n2026-11-01,-42.30,Supermarket,1\n2026-11-02,5.00,Refund,1\n"
            // What the import wrote before: the file's numbers as they stand, and the same derived ids.
            let old = try await app.importStatement(statement, query: "?amounts=budget")
            #expect(old.status == 201)
            _ = try await app.request("POST", "/transactions", json: #"{"categoryId":2,"title":"By hand","amount":"9.99","date":"2026-11-01"}"#)
            let now = try await app.importStatement(statement)
            #expect(now.status == 200)
            #expect(now.object["duplicates"] as? Int == 2, "\(now.text)")

            _ = try await app.scalar(mend.replacingOccurrences(of: "2026-11-28 00:00:00+00", with: "infinity"))
            _ = try await app.scalar(mend.replacingOccurrences(of: "2026-11-28 00:00:00+00", with: "infinity"))
            #expect(
                try await app.transactionRows().map { [$0[1], $0[2]] } == [["Supermarket", "42.30"], ["Refund", "-5.00"], ["By hand", "9.99"]])
            #expect(try await app.request("GET", "/transactions/1").object["version"] as? Int == 2, "clients see the change")
            try await waitUntil("the mended rows are in the change feed") {
                let page = try await app.changes("collection=transactions")
                return page.changes.contains { ($0["id"] as? Int) == 1 && ($0["version"] as? Int) == 2 }
            }
        }
    }
}
