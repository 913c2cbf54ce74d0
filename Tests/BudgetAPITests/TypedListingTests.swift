import Foundation
import Testing
import TestSupport
import APITestSupport
import BudgetCore

/// The query language of docs/json-server.md on the typed budget resources, over the real stack.
@Suite struct TypedListingTests {
    /// Two categories and five transactions with distinct amounts, dates and titles.
    private static func seedBudget(_ app: TestApp) async throws {
        _ = try await app.request("POST", "/categories", json: #"[{"title":"Groceries","amount":400},{"title":"Rent","amount":950}]"#)
        _ = try await app.request(
            "POST", "/transactions",
            json: """
                [{"categoryId":1,"title":"Milk","amount":3.49,"date":"2026-11-02"},
                 {"categoryId":1,"title":"Weekly shop","amount":"119.96","date":"2026-11-09","note":"market"},
                 {"categoryId":1,"title":"Oat milk","amount":2.5,"date":"2026-11-16"},
                 {"categoryId":2,"title":"November rent","amount":950,"date":"2026-11-01"},
                 {"categoryId":2,"title":"Deposit refund","amount":-100,"date":"2026-11-20"}]
                """)
    }

    private func titles(_ response: TestResponse) -> [String] {
        response.array.compactMap { $0["title"] as? String }
    }

    @Test func filtersCompareByTheColumnsType() async throws {
        try await TestApp.with { app in
            try await Self.seedBudget(app)
            let byCategory = try await app.request("GET", "/transactions?categoryId=2")
            #expect(titles(byCategory) == ["November rent", "Deposit refund"])
            // Money compares exactly, not as text: "9" would sort after "119.96" as a string.
            let large = try await app.request("GET", "/transactions?amount_gte=100")
            #expect(titles(large) == ["Weekly shop", "November rent"])
            let early = try await app.request("GET", "/transactions?date_lte=2026-11-02&amount_ne=950")
            #expect(titles(early) == ["Milk"])
            let either = try await app.request("GET", "/transactions?title=Milk&title=Oat%20milk")
            #expect(titles(either) == ["Milk", "Oat milk"])
            let operators = try await app.request("GET", "/transactions?amount:lt=3&title:contains=milk")
            #expect(titles(operators) == ["Oat milk"])
        }
    }

    @Test func sortingAndSearching() async throws {
        try await TestApp.with { app in
            try await Self.seedBudget(app)
            let sorted = try await app.request("GET", "/transactions?_sort=amount&_order=desc")
            #expect(titles(sorted) == ["November rent", "Weekly shop", "Milk", "Oat milk", "Deposit refund"])
            let newest = try await app.request("GET", "/transactions?_sort=-date&_limit=2")
            #expect(titles(newest) == ["Deposit refund", "Oat milk"])
            let search = try await app.request("GET", "/transactions?q=MILK")
            #expect(titles(search) == ["Milk", "Oat milk"])
            let like = try await app.request("GET", "/categories?title_like=^gro")
            #expect(titles(like) == ["Groceries"])
            let nested = try await app.request("GET", "/categories/1/transactions?_sort=-amount")
            #expect(titles(nested) == ["Weekly shop", "Milk", "Oat milk"])
        }
    }

    @Test func pagesCarryTotalAndLinks() async throws {
        try await TestApp.with { app in
            try await Self.seedBudget(app)
            let page = try await app.request("GET", "/transactions?_page=2&_limit=2", headers: [("Host", "budget.test")])
            #expect(titles(page) == ["Oat milk", "November rent"])
            #expect(page.header("X-Total-Count") == "5")
            let link = page.header("Link") ?? ""
            #expect(link.contains(#"<http://budget.test/transactions?_page=1&_limit=2>; rel="first""#))
            #expect(link.contains(#"<http://budget.test/transactions?_page=1&_limit=2>; rel="prev""#))
            #expect(link.contains(#"<http://budget.test/transactions?_page=3&_limit=2>; rel="next""#))
            #expect(link.contains(#"<http://budget.test/transactions?_page=3&_limit=2>; rel="last""#))
            let slice = try await app.request("GET", "/transactions?_start=1&_end=3")
            #expect(titles(slice) == ["Weekly shop", "Oat milk"])
            #expect(slice.header("X-Total-Count") == "5")
            let envelope = try await app.request("GET", "/categories/1/transactions?_page=9&_per_page=2")
            #expect(envelope.object["items"] as? Int == 3)
            #expect(envelope.object["pages"] as? Int == 2)
            #expect(envelope.object["last"] as? Int == 2)
            #expect((envelope.object["data"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == ["Oat milk"])
        }
    }

    @Test(arguments: [
        "/categories?colour=red",
        "/transactions?_sort=colour",
        "/transactions?amount_gte=lots",
        "/transactions?date=2026-02-30",
        "/categories?title_like=(unclosed",
        "/transactions?_page=x",
        "/transactions?_where=not-json",
        "/transactions?amount:between=1",
    ])
    func badQueriesAre400(path: String) async throws {
        try await TestApp.with { app in
            try await Self.seedBudget(app)
            let response = try await app.request("GET", path)
            #expect(response.status == 400)
            #expect(response.header("Content-Type") == "application/problem+json")
        }
    }

    @Test func unknownFieldsNameTheKnownOnes() async throws {
        try await TestApp.with { app in
            let response = try await app.request("GET", "/categories?colour=red")
            let detail = response.object["detail"] as? String ?? ""
            #expect(detail.contains("title"))
            #expect(detail.contains("amount"))
        }
    }

    @Test func injectionAttemptsStayValues() async throws {
        try await TestApp.with { app in
            try await Self.seedBudget(app)
            let attempts = [
                "/categories?title=x%27)%3B%20DROP%20TABLE%20categories%3B--",
                "/transactions?q=%27%3B%20DELETE%20FROM%20transactions%3B--",
                "/transactions?title_like=%27%3B%20DROP%20TABLE%20transactions%3B--",
                "/transactions?_sort=id%3B%20DROP%20TABLE%20transactions",
                "/transactions?_where=%7B%22title%22%3A%7B%22eq%22%3A%22%27%3B%20DROP%20TABLE%20transactions%3B--%22%7D%7D",
            ]
            for path in attempts {
                let response = try await app.request("GET", path)
                #expect([200, 400].contains(response.status))
            }
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "2")
            #expect(try await app.scalar("SELECT count(*) FROM transactions") == "5")
        }
    }
}
