import BudgetAPI
import Foundation
import Postgres
import Testing
import APITestSupport

/// README.md, "Splits and schedules", after every write of the README before it: each answer it shows is the
/// server's (ids, figures and members; times are the server's own), and so is the month figure its prose
/// quotes. The server's clock stands where the README says it was run, 28 November 2026, so the upcoming
/// occurrences and `nextDate` are those it shows whatever day the test runs.
@Suite struct SplitsAndSchedulesReadmeTests {
    @Test func theReadmesSplitAndSchedulesAnswerAsTheServerDoes() async throws {
        let section = try ReadmeSection("## Splits and schedules")
        let text = section.text
        try #require(
            section.commands.count == 4 && section.answers.count == 4, "\(section.commands.count) commands, \(section.answers.count) answers")
        try #require(section.writesBefore.count >= 8, "the walk's and the accounts' writes were found")
        let quoted = try #require(text.firstMatch(of: /"scheduled":(-?[0-9.]+)/))
        let balance = try #require(text.firstMatch(of: /from 3000\.00 to ([0-9]+\.[0-9]{2})/))

        var options = BudgetApp.Options()
        options.clock = CivilClock(now: try #require(Timestamp("2026-11-28T12:00:00Z")))
        try await TestApp.with(options: options) { app in
            try await section.replay(on: app, comparable: AccountsReadmeTests.comparable)
            let december = try await app.request("GET", "/months/2026-12").object
            #expect(String(format: "%.2f", december["scheduled"] as? Double ?? .nan) == String(quoted.1))
            let checking = try await app.request("GET", "/accounts/1").object
            #expect(String(format: "%.2f", checking["balance"] as? Double ?? .nan) == String(balance.1))
            // The parts are what the categories count: November's Groceries and Eating out gained them.
            let parts = try await app.request("GET", "/transactions?parentId=17").text
            #expect(parts.contains(#""categoryId":1,"title":"Supermarket","amount":62.30"#), "\(parts)")
            #expect(parts.contains(#""categoryId":3,"title":"Supermarket","amount":22.00"#), "\(parts)")
        }
    }
}
