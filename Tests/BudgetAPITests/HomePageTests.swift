@testable import BudgetAPI
import Foundation
import BudgetCore
import Postgres
import Testing
import APITestSupport

/// `GET /`: the page for people that lists every resource (docs/json-server.md, Home page), and
/// `GET /openapi.yaml`, which it links to.
@Suite struct HomePageTests {
    /// Typed records, a plural and a singular generic collection; Rent is overspent, Travel has nothing spent
    /// and Fees has a zero budget, so every kind of bar is drawn.
    static let seed = #"""
        {"categories":[{"id":1,"title":"Groceries","amount":"400.00"},{"id":2,"title":"Rent","amount":"950.00"},
                       {"id":3,"title":"Travel","amount":"0.30"},{"id":4,"title":"Fees","amount":0}],
         "transactions":[{"id":1,"categoryId":1,"title":"Milk","amount":"3.49","date":"2026-11-20"},
                         {"id":2,"categoryId":1,"title":"Shop","amount":"119.96","date":"2026-11-21"},
                         {"id":3,"categoryId":2,"title":"Rent","amount":"950.01","date":"2026-11-01"},
                         {"id":4,"categoryId":4,"title":"Bank","amount":"0.10","date":"2026-11-02"},
                         {"id":5,"categoryId":4,"title":"Bank","amount":"0.20","date":"2026-11-03"}],
         "posts":[{"id":1,"title":"a"},{"id":2,"title":"b"},{"id":3,"title":"c"}],
         "profile":{"name":"demo"}}
        """#

    /// The page shows this month's figures: the seed's month, whenever the test runs.
    static func options() throws -> BudgetApp.Options {
        var options = BudgetApp.Options()
        options.clock = CivilClock(now: try #require(Timestamp("2026-11-25T12:00:00Z")))
        return options
    }

    static func seeded(_ body: (TestApp) async throws -> Void) async throws {
        try await TestApp.with(options: try options()) { app in
            try await app.seed(seed)
            try await body(app)
        }
    }

    @Test func listsEveryResourceWithItsCountAndLink() async throws {
        try await Self.seeded { app in
            let page = try await app.request("GET", "/")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            let html = page.text
            for row in [
                #"<a href="/categories">/categories</a></td><td>typed</td><td class="count">4</td>"#,
                #"<a href="/transactions">/transactions</a></td><td>typed</td><td class="count">5</td>"#,
                #"<a href="/posts">/posts</a></td><td>collection</td><td class="count">3</td>"#,
                #"<a href="/profile">/profile</a></td><td>singular</td><td class="count">object</td>"#,
            ] {
                #expect(html.contains(row), "\(row)")
            }
            for endpoint in ["openapi.yaml", "changes", "db", "health", "metrics"] {
                #expect(html.contains(#"<a href="/\#(endpoint)">/\#(endpoint)</a>"#), "\(endpoint)")
                let linked = try await app.request("GET", "/\(endpoint)")
                #expect(linked.status == 200, "\(endpoint)")
            }
            #expect(html.contains(#"<a href="/categories/2">Rent</a>"#))
        }
    }

    @Test func barsShowThisMonthsSpentAndRemainingAsTheAPIAnswersThem() async throws {
        try await Self.seeded { app in
            let html = try await app.request("GET", "/").text
            #expect(html.contains("<h2>Budgets for November 2026</h2>"))
            // The API's own figures, as text: the JSON writes money with exactly two decimals.
            let json = try await app.request("GET", "/categories?month=current&_sort=id").text
            let apiFigures = Self.matches(of: #/"spent":(-?[0-9.]+),"remaining":(-?[0-9.]+)/#, in: json)
            let pageFigures = Self.matches(of: #/data-spent="(-?[0-9.]+)" data-remaining="(-?[0-9.]+)"/#, in: html)
            #expect(apiFigures.count == 4)
            #expect(pageFigures == apiFigures)
            #expect(pageFigures == [["123.45", "276.55"], ["950.01", "-0.01"], ["0.00", "0.30"], ["0.30", "-0.30"]])

            #expect(html.contains("123.45 of 400.00 spent, 276.55 left"))
            #expect(html.contains(#"style="width:30.8%""#))  // 123.45 / 400.00, in tenths of a percent
            #expect(html.contains(#"<li class="budget over" data-id="2""#))
            #expect(html.contains("950.01 of 950.00 spent, over by 0.01"))
            #expect(html.contains(#"style="width:100.0%""#))
            #expect(html.contains(#"style="width:0.0%""#))
        }
    }

    @Test func escapesTitlesItPrints() async throws {
        try await TestApp.with { app in
            let title = #"<script>alert("x")</script> & 'q'"#
            let body = try JSONSerialization.data(withJSONObject: ["title": title, "amount": "1.00"])
            let created = try await app.request("POST", "/categories", json: String(decoding: body, as: UTF8.self))
            #expect(created.status == 201)
            let html = try await app.request("GET", "/").text
            #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"))
            #expect(!html.contains("<script"))
            #expect(!html.contains("alert(\""))
        }
    }

    /// Collection names cannot hold these characters today (migrations/0005), so the renderer is given one.
    @Test func escapesNamesAndEncodesTheirLinks() {
        var page = HomePage()
        page.resources = [HomePage.Resource(name: #""><img src=x onerror=alert(1)>'"#, kind: .plural, records: 1)]
        let html = String(decoding: page.render(), as: UTF8.self)
        #expect(html.contains(#"<a href="/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E%27">"#))
        #expect(html.contains(#"/&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&#39;</a>"#))
        #expect(!html.contains("<img"))
    }

    @Test func saysWhenOnlyTheFirstBudgetsAreShown() throws {
        var page = HomePage()
        page.resources = [HomePage.Resource(name: "categories", kind: .typed, records: 150)]
        page.budgets = [
            HomePage.Budget(
                id: 1, title: "Food", budgeted: try #require(Money("10.00")), carried: try #require(Money("0.00")),
                spent: try #require(Money("2.50")), remaining: try #require(Money("7.50")))
        ]
        let html = String(decoding: page.render(), as: UTF8.self)
        #expect(html.contains(#"The first 1 of 150 categories; <a href="/categories">/categories</a> has them all."#))
        #expect(html.contains(#"style="width:25.0%""#))
    }

    @Test func headAndRevalidationWorkAsForAnyGet() async throws {
        try await Self.seeded { app in
            let page = try await app.request("GET", "/")
            let head = try await app.request("HEAD", "/")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Type") == "text/html; charset=utf-8")
            #expect(head.header("Content-Length") == String(page.body.count))
            let tag = try #require(page.header("ETag"))
            #expect(head.header("ETag") == tag)
            let unchanged = try await app.request("GET", "/", headers: [("If-None-Match", tag)])
            #expect(unchanged.status == 304)
            _ = try await app.request("POST", "/posts", json: #"{"title":"d"}"#)
            let changed = try await app.request("GET", "/", headers: [("If-None-Match", tag)])
            #expect(changed.status == 200)
            #expect(changed.text.contains(#"<a href="/posts">/posts</a></td><td>collection</td><td class="count">4</td>"#))
        }
    }

    @Test func noHomeAnswers404AtTheRoot() async throws {
        var options = BudgetApp.Options()
        options.servesHomePage = false
        try await TestApp.with(options: options) { app in
            for method in ["GET", "HEAD"] {
                let response = try await app.request(method, "/")
                #expect(response.status == 404, "\(method)")
                #expect(response.header("Content-Type") == "application/problem+json", "\(method)")
            }
            #expect(try await app.request("GET", "/openapi.yaml").status == 200)
        }
    }

    @Test func servesTheOpenAPIDocumentItWasBuiltWith() async throws {
        try await TestApp.with { app in
            let response = try await app.request("GET", "/openapi.yaml")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/yaml; charset=utf-8")
            let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let file = try Data(contentsOf: repository.appendingPathComponent("openapi.yaml"))
            #expect(response.body == [UInt8](file))
        }
    }

    /// Each match's captures, in order.
    static func matches(of pattern: Regex<(Substring, Substring, Substring)>, in text: String) -> [[String]] {
        text.matches(of: pattern).map { [String($0.output.1), String($0.output.2)] }
    }
}

extension HomePageTests {
    /// What a month carried shows beside its budget, and the bar measures spending against both.
    @Test func aCarryShowsBesideTheBudget() async throws {
        try await TestApp.with(options: try Self.options()) { app in
            _ = try await app.request("POST", "/categories", json: #"{"title":"Fun","amount":"100.00","rollover":true}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"a","amount":"50.00","date":"2026-10-02"}"#)
            _ = try await app.request("POST", "/categories/1/transactions", json: #"{"title":"b","amount":"75.00","date":"2026-11-02"}"#)
            let html = try await app.request("GET", "/").text
            #expect(html.contains(#"data-budgeted="100.00" data-carried="50.00" data-spent="75.00" data-remaining="75.00""#), "\(html)")
            #expect(html.contains("75.00 of 100.00 spent, 50.00 carried, 75.00 left"))
            #expect(html.contains(#"style="width:50.0%""#))  // 75.00 of the 150.00 the month has
        }
    }
}
