@testable import BudgetAPI
import Foundation
import Postgres
import Testing
import TestSupport
import APITestSupport

/// A category seen in a month (docs/api.md, Months): `?month=`, rollover, overrides, `current`, and the
/// answers without `month`.
@Suite struct MonthTests {
    /// The month members of a category answer, as text: `[month, budgeted, carried, spent, remaining]`.
    static func figures(_ response: TestResponse) -> [String] {
        // The first record's members as the server wrote them: a quoted month, then numbers with their digits.
        let members = ["month", "budgeted", "carried", "spent", "remaining"]
        guard response.text.contains(#""month":"#) else { return [] }
        return members.map { name in
            guard let range = response.text.range(of: #""\#(name)":"#) else { return "" }
            let value = response.text[range.upperBound...]
            if value.first == "\"" { return String(value.dropFirst().prefix { $0 != "\"" }) }
            return String(value.prefix { $0 == "-" || $0 == "." || $0.isNumber })
        }
    }

    static func figures(_ app: TestApp, category: Int, month: String) async throws -> [String] {
        let response = try await app.request("GET", "/categories/\(category)?month=\(month)")
        #expect(response.status == 200, "\(month): \(response.text)")
        return figures(response)
    }

    static func post(_ app: TestApp, _ path: String, _ json: String) async throws {
        let response = try await app.request("POST", path, json: json)
        #expect(response.status == 201, "POST \(path) \(json): \(response.text)")
    }

    @Test func aMonthCountsItsLastDayAndNotTheNextMonthsFirst() async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Food","amount":100}"#)
            for (date, amount) in [("2025-12-31", "1.00"), ("2026-01-01", "2.00"), ("2026-01-31", "10.00"), ("2026-02-01", "5.00")] {
                try await Self.post(app, "/categories/1/transactions", #"{"title":"x","amount":"\#(amount)","date":"\#(date)"}"#)
            }
            #expect(try await Self.figures(app, category: 1, month: "2025-12") == ["2025-12", "100.00", "0.00", "1.00", "99.00"])
            #expect(try await Self.figures(app, category: 1, month: "2026-01") == ["2026-01", "100.00", "0.00", "12.00", "88.00"])
            #expect(try await Self.figures(app, category: 1, month: "2026-02") == ["2026-02", "100.00", "0.00", "5.00", "95.00"])
            // Without a month, spent is all-time and no month member appears.
            let plain = try await app.request("GET", "/categories/1")
            #expect(plain.text.contains(#""spent":18.00,"remaining":82.00"#) && !plain.text.contains("budgeted"), "\(plain.text)")
        }
    }

    @Test func aLeapYearFebruaryHoldsItsTwentyNinthDay() async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Food","amount":50}"#)
            try await Self.post(app, "/categories/1/transactions", #"{"title":"leap","amount":"7.00","date":"2028-02-29"}"#)
            try await Self.post(app, "/categories/1/transactions", #"{"title":"march","amount":"3.00","date":"2028-03-01"}"#)
            let notADay = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"x","amount":1,"date":"2027-02-29"}"#)
            #expect(notADay.status == 422 && notADay.problemFields == ["date"])
            #expect(try await Self.figures(app, category: 1, month: "2028-02") == ["2028-02", "50.00", "0.00", "7.00", "43.00"])
            #expect(try await Self.figures(app, category: 1, month: "2028-03") == ["2028-03", "50.00", "0.00", "3.00", "47.00"])
        }
    }

    /// A debt carries across the year end; a refund lowers spending; a month without transactions carries on.
    @Test func rolloverCarriesDebtsAcrossTheYearEnd() async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Fun","amount":100,"rollover":true}"#)
            try await Self.post(app, "/categories", #"{"title":"Flat","amount":100}"#)
            for (category, date, amount) in [
                (1, "2025-11-10", "150.00"), (1, "2025-12-05", "20.00"), (1, "2026-02-03", "-10.00"),
                (2, "2025-11-10", "150.00"),
            ] {
                try await Self.post(app, "/categories/\(category)/transactions", #"{"title":"x","amount":"\#(amount)","date":"\#(date)"}"#)
            }
            // Before its first month a category has no figures but its amount.
            #expect(try await Self.figures(app, category: 1, month: "2025-10") == ["2025-10", "100.00", "0.00", "0.00", "100.00"])
            #expect(try await Self.figures(app, category: 1, month: "2025-11") == ["2025-11", "100.00", "0.00", "150.00", "-50.00"])
            #expect(try await Self.figures(app, category: 1, month: "2025-12") == ["2025-12", "100.00", "-50.00", "20.00", "30.00"])
            #expect(try await Self.figures(app, category: 1, month: "2026-01") == ["2026-01", "100.00", "30.00", "0.00", "130.00"])
            #expect(try await Self.figures(app, category: 1, month: "2026-02") == ["2026-02", "100.00", "130.00", "-10.00", "240.00"])
            // Without rollover nothing carries.
            #expect(try await Self.figures(app, category: 2, month: "2025-12") == ["2025-12", "100.00", "0.00", "0.00", "100.00"])

            let months = try await app.request("GET", "/months?from=2025-11&to=2026-01")
            #expect(months.status == 200)
            #expect(
                months.text == #"""
                    [{"month":"2025-11","budgeted":200.00,"spent":300.00,"carried":0.00,"remaining":-100.00,"income":0.00,"uncategorised":0.00,"toBeBudgeted":-200.00,"scheduled":0.00},\#
                    {"month":"2025-12","budgeted":200.00,"spent":20.00,"carried":-50.00,"remaining":130.00,"income":0.00,"uncategorised":0.00,"toBeBudgeted":-400.00,"scheduled":0.00},\#
                    {"month":"2026-01","budgeted":200.00,"spent":0.00,"carried":30.00,"remaining":230.00,"income":0.00,"uncategorised":0.00,"toBeBudgeted":-600.00,"scheduled":0.00}]
                    """#)
            #expect(months.header("X-Sync-Seq") != nil)

            let december = try await app.request("GET", "/months/2025-12")
            #expect(december.status == 200)
            #expect(
                december.text.hasPrefix(
                    #"{"month":"2025-12","budgeted":200.00,"spent":20.00,"carried":-50.00,"remaining":130.00,"income":0.00,"uncategorised":0.00,"toBeBudgeted":-400.00,"scheduled":0.00,"categories":[{"id":1,"#
                ))
            let categories = try #require(december.object["categories"] as? [[String: Any]])
            #expect(categories.map { $0["id"] as? Int } == [1, 2])
            // Each row is the category's own month answer.
            let one = try await app.request("GET", "/categories/1?month=2025-12")
            #expect(december.text.contains(one.text))
        }
    }

    /// Overrides count where they are and stop counting once deleted, in every later carry.
    @Test func anOverrideDeletedMidHistoryLeavesTheCategoryAmount() async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Groceries","amount":400,"rollover":true}"#)
            for (date, amount) in [("2026-01-10", "380.00"), ("2026-02-10", "450.00"), ("2026-03-10", "100.00")] {
                try await Self.post(app, "/categories/1/transactions", #"{"title":"shop","amount":"\#(amount)","date":"\#(date)"}"#)
            }
            let set = try await app.request("PUT", "/categories/1/budgets/2026-02", json: #"{"amount":450}"#)
            #expect(set.status == 201, "\(set.text)")
            #expect(try await Self.figures(app, category: 1, month: "2026-02") == ["2026-02", "450.00", "20.00", "450.00", "20.00"])
            #expect(try await Self.figures(app, category: 1, month: "2026-03") == ["2026-03", "400.00", "20.00", "100.00", "320.00"])

            let removed = try await app.request("DELETE", "/categories/1/budgets/2026-02")
            #expect(removed.status == 200)
            #expect(removed.text == set.text, "DELETE answers the budget it removed")
            #expect(try await Self.figures(app, category: 1, month: "2026-02") == ["2026-02", "400.00", "20.00", "450.00", "-30.00"])
            #expect(try await Self.figures(app, category: 1, month: "2026-03") == ["2026-03", "400.00", "-30.00", "100.00", "270.00"])
            #expect(try await app.request("GET", "/categories/1/budgets/2026-02").status == 404)
        }
    }

    /// 23:30 UTC on November 30th is already December 1st in Tokyo.
    @Test func currentIsTheServersMonthInItsTimeZone() async throws {
        let instant = try #require(Timestamp("2026-11-30T23:30:00Z"))
        for (zone, month, today) in [("Asia/Tokyo", "2026-12", "2026-12-01"), ("UTC", "2026-11", "2026-11-30")] {
            var options = BudgetApp.Options()
            options.clock = CivilClock(timeZone: zone, now: instant)
            try await TestApp.with(options: options) { app in
                try await Self.post(app, "/categories", #"{"title":"Food","amount":10}"#)
                let list = try await app.request("GET", "/categories?month=current")
                #expect(list.status == 200)
                #expect(Self.figures(list).first == month, "\(zone): \(list.text)")
                let summary = try await app.request("GET", "/months/current")
                #expect(summary.object["month"] as? String == month, "\(zone): \(summary.text)")
                let added = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"now","amount":1}"#)
                #expect(added.object["date"] as? String == today, "\(zone): \(added.text)")
                #expect(try await Self.figures(app, category: 1, month: "current") == [month, "10.00", "0.00", "1.00", "9.00"])
                #expect(try await app.request("GET", "/").text.contains(#"data-spent="1.00""#))
            }
        }
    }

    /// Without `month` every answer is what it was before months existed, plus `rollover`.
    @Test func answersWithoutMonthAreTodaysPlusRollover() async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Groceries","amount":400}"#)
            try await Self.post(app, "/categories/1/transactions", #"{"title":"Milk","amount":3.49,"date":"2026-11-20"}"#)
            try await Self.post(app, "/categories/1/budgets", #"{"month":"2026-11","amount":450}"#)
            let record = try await app.request("GET", "/categories/1")
            let created = try #require(record.object["createdAt"] as? String)
            let before =
                #"{"id":1,"title":"Groceries","amount":400.00,"spent":3.49,"remaining":396.51,"createdAt":"\#(created)","updatedAt":"\#(created)","version":1}"#
            let withRollover = before.replacingOccurrences(of: #""amount":400.00,"#, with: #""amount":400.00,"rollover":false,"#)
            #expect(record.text == withRollover)
            #expect(try await app.request("GET", "/categories").text == "[\(withRollover)]")
            #expect(try await app.request("GET", "/categories?title=Groceries&_page=1").text == "[\(withRollover)]")
            let feed = try await app.request("GET", "/changes?collection=categories")
            #expect(feed.text.contains(#""data":\#(withRollover)}"#))
            let expanded = try await app.request("GET", "/transactions/1?_expand=category")
            #expect(expanded.text.hasSuffix(#""category":\#(withRollover)}"#))
        }
    }

    @Test func monthFiguresFilterAndSortInTheQueryLanguage() async throws {
        try await TestApp.with { app in
            for (title, amount) in [("A", 10), ("B", 20), ("C", 30)] {
                try await Self.post(app, "/categories", #"{"title":"\#(title)","amount":\#(amount)}"#)
            }
            for (category, amount) in [(1, "15.00"), (2, "5.00"), (3, "29.00")] {
                try await Self.post(app, "/categories/\(category)/transactions", #"{"title":"x","amount":"\#(amount)","date":"2026-03-03"}"#)
            }
            let over = try await app.request("GET", "/categories?month=2026-03&remaining_lt=0")
            #expect(over.array.map { $0["id"] as? Int } == [1])
            let sorted = try await app.request("GET", "/categories?month=2026-03&_sort=-spent")
            #expect(sorted.array.map { $0["id"] as? Int } == [3, 1, 2])
            let budgeted = try await app.request("GET", "/categories?month=2026-03&budgeted_gte=20&carried=0")
            #expect(budgeted.array.map { $0["id"] as? Int } == [2, 3])
            // Another month has other figures: nothing was spent in April.
            let april = try await app.request("GET", "/categories?month=2026-04&spent_gt=0")
            #expect(april.text == "[]")
            let embedded = try await app.request("GET", "/categories/1?month=2026-03&_embed=transactions")
            #expect(embedded.text.contains(#""month":"2026-03","budgeted":10.00,"carried":0.00,"spent":15.00,"remaining":-5.00"#))
            #expect((embedded.object["transactions"] as? [Any])?.count == 1)
            let unknown = try await app.request("GET", "/categories?budgeted=1")
            #expect(unknown.status == 400, "budgeted is a month member only")
        }
    }

    @Test(arguments: ["2026-13", "2026-1", "26-11", "2026-11-01", "2026-00", "", "now"])
    func aMalformedMonthIs400NamingIt(month: String) async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Food","amount":10}"#)
            for path in [
                "/categories?month=\(month)", "/categories/1?month=\(month)", "/months?from=\(month)&to=2026-11",
                "/months?from=2026-01&to=\(month)", "/reports/spending?from=\(month)&to=2026-11",
            ] {
                let answer = try await app.request("GET", path)
                #expect(answer.status == 400, "\(path): \(answer.text)")
                #expect(answer.header("Content-Type") == "application/problem+json")
                #expect(answer.problemFields.count == 1, "\(path): \(answer.text)")
            }
            if !month.isEmpty {
                let path = try await app.request("GET", "/months/\(month)")
                #expect(path.status == 400 && path.problemFields == ["month"], "\(path.text)")
            }
            #expect(try await app.request("GET", "/categories?month=\(month)").problemFields == ["month"])
        }
    }

    @Test func rangesAreOrderedAndHoldAtMost120Months() async throws {
        try await TestApp.with { app in
            let backwards = try await app.request("GET", "/months?from=2026-02&to=2026-01")
            #expect(backwards.status == 400 && backwards.problemFields == ["from"], "\(backwards.text)")
            let long = try await app.request("GET", "/reports/spending?from=2016-01&to=2026-01")
            #expect(long.status == 400 && long.problemFields == ["to"], "\(long.text)")
            let longest = try await app.request("GET", "/months?from=2016-02&to=2026-01")
            #expect(longest.status == 200 && longest.array.count == 120)
            let missing = try await app.request("GET", "/months?from=2026-01")
            #expect(missing.status == 400 && missing.problemFields == ["to"])
            #expect(
                try await app.request("GET", "/months?from=2026-01&to=2026-01").text
                    == #"[{"month":"2026-01","budgeted":0.00,"spent":0.00,"carried":0.00,"remaining":0.00,"income":0.00,"uncategorised":0.00,"toBeBudgeted":0.00,"scheduled":0.00}]"#
            )
            #expect(
                try await app.request("GET", "/months/2026-01").text
                    == #"{"month":"2026-01","budgeted":0.00,"spent":0.00,"carried":0.00,"remaining":0.00,"income":0.00,"uncategorised":0.00,"toBeBudgeted":0.00,"scheduled":0.00,"categories":[]}"#
            )
        }
    }

    @Test func theSpendingReportHasEveryMonthInJSONAndCSV() async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Food","amount":10}"#)
            try await Self.post(app, "/categories", #"{"title":"Rent","amount":20}"#)
            for (category, date, amount) in [(2, "2026-01-05", "500.00"), (1, "2026-03-01", "2.50"), (1, "2026-03-31", "-0.50")] {
                try await Self.post(app, "/categories/\(category)/transactions", #"{"title":"x","amount":"\#(amount)","date":"\#(date)"}"#)
            }
            let report = try await app.request("GET", "/reports/spending?from=2026-01&to=2026-03")
            #expect(report.status == 200)
            #expect(report.headers.contains { $0.name == "Vary" && $0.value.contains("Accept") })
            #expect(
                report.text == #"""
                    [{"categoryId":1,"month":"2026-01","spent":0.00,"count":0},{"categoryId":2,"month":"2026-01","spent":500.00,"count":1},\#
                    {"categoryId":1,"month":"2026-02","spent":0.00,"count":0},{"categoryId":2,"month":"2026-02","spent":0.00,"count":0},\#
                    {"categoryId":1,"month":"2026-03","spent":2.00,"count":2},{"categoryId":2,"month":"2026-03","spent":0.00,"count":0}]
                    """#)
            let csv = try await app.request("GET", "/reports/spending?from=2026-02&to=2026-03&categoryId=1", headers: [("Accept", "text/csv")])
            #expect(csv.status == 200)
            #expect(csv.header("Content-Type") == "text/csv; charset=utf-8")
            #expect(csv.text == "categoryId,month,spent,count\r\n1,2026-02,0.00,0\r\n1,2026-03,2.00,2\r\n")
            #expect(csv.header("ETag") != nil && csv.header("ETag") != report.header("ETag"))
            let preferred = try await app.request(
                "GET", "/reports/spending?from=2026-03&to=2026-03&categoryId=2", headers: [("Accept", "application/json;q=0.5, text/csv")])
            #expect(preferred.text == "categoryId,month,spent,count\r\n2,2026-03,0.00,0\r\n")
            let json = try await app.request("GET", "/reports/spending?from=2026-03&to=2026-03&categoryId=2", headers: [("Accept", "*/*")])
            #expect(json.text == #"[{"categoryId":2,"month":"2026-03","spent":0.00,"count":0}]"#)
            #expect(try await app.request("GET", "/reports/spending?from=2026-03&to=2026-03&categoryId=9").status == 404)
            let badID = try await app.request("GET", "/reports/spending?from=2026-03&to=2026-03&categoryId=x")
            #expect(badID.status == 400 && badID.problemFields == ["categoryId"])
        }
    }

    /// psql's category_month() (migrations/0014) answers the figures the API answers.
    @Test func thePsqlFunctionAnswersTheAPIsFigures() async throws {
        try await TestApp.with { app in
            try await Self.post(app, "/categories", #"{"title":"Fun","amount":100,"rollover":true}"#)
            try await Self.post(app, "/categories/1/transactions", #"{"title":"x","amount":"130.00","date":"2026-01-10"}"#)
            _ = try await app.request("PUT", "/categories/1/budgets/2026-02", json: #"{"amount":"80.00"}"#)
            let row = try await app.scalar(
                """
                SELECT concat_ws(',', id, title, amount, rollover, month, budgeted, carried, spent, remaining)
                FROM category_month('2026-02-14')
                """)
            #expect(row == "1,Fun,100.00,t,2026-02,80.00,-30.00,0.00,50.00")
            #expect(try await Self.figures(app, category: 1, month: "2026-02") == ["2026-02", "80.00", "-30.00", "0.00", "50.00"])
        }
    }
}
