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
        let readme = try ReadmeCommand.readme()
        let walk = try #require(readme.range(of: "## A walk through with curl"))
        let section = try #require(readme.range(of: "## Splits and schedules"))
        let sectionEnd = try #require(readme.range(of: "\n## ", range: section.upperBound..<readme.endIndex)).lowerBound
        let text = readme[section.upperBound..<sectionEnd]
        let answers = text.components(separatedBy: "```json\n").dropFirst()
            .flatMap { $0.components(separatedBy: "\n```")[0].split(separator: "\n").map(String.init) }
        let commands = try ReadmeCommand.commands(in: text)
        try #require(commands.count == 4 && answers.count == 4, "\(commands.count) commands, \(answers.count) answers")
        let before = try ReadmeCommand.commands(in: readme[walk.upperBound..<section.lowerBound]).filter { $0.method != "GET" }
        try #require(before.count >= 8, "the walk's and the accounts' writes were found")
        let quoted = try #require(text.firstMatch(of: /"scheduled":(-?[0-9.]+)/))
        let balance = try #require(text.firstMatch(of: /from 3000\.00 to ([0-9]+\.[0-9]{2})/))

        var options = BudgetApp.Options()
        options.clock = CivilClock(now: try #require(Timestamp("2026-11-28T12:00:00Z")))
        try await TestApp.with(options: options) { app in
            for command in before {
                let response = try await app.send(command)
                #expect(response.status < 500, "\(command.method) \(command.target): \(response.text)")
            }
            for (command, answer) in zip(commands, answers) {
                let response = try await app.send(command)
                #expect(response.status < 300, "\(command.method) \(command.target): \(response.text)")
                #expect(
                    try AccountsReadmeTests.comparable(response.text) == AccountsReadmeTests.comparable(answer),
                    "\(command.method) \(command.target):\n\(response.text)\nREADME:\n\(answer)")
            }
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
