import Foundation
import Testing
import APITestSupport

/// README.md, "Accounts: where the money is", after the walk and the import before it: every answer the
/// README shows is the server's (ids, figures and members; times and Savings' `openedOn`, today, are the
/// server's own), and so are the month figures its prose quotes.
@Suite struct AccountsReadmeTests {
    /// A README answer or a server answer, without what the README cannot know: the times, and the
    /// `openedOn` of an account opened today.
    static func comparable(_ text: String) throws -> NSDictionary {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return strip(value) as? NSDictionary ?? ["list": strip(value)]
    }

    private static func strip(_ value: Any) -> Any {
        if let list = value as? [Any] { return list.map(strip) }
        guard var object = value as? [String: Any] else { return value }
        object["createdAt"] = nil
        object["updatedAt"] = nil
        if object["name"] as? String == "Savings" { object["openedOn"] = nil }
        return object.mapValues(strip)
    }

    @Test func theReadmesAccountsAnswerAsTheServerDoes() async throws {
        let readme = try ReadmeCommand.readme()
        let walk = try #require(readme.range(of: "## A walk through with curl"))
        let section = try #require(readme.range(of: "## Accounts: where the money is"))
        let sectionEnd = try #require(readme.range(of: "\n## ", range: section.upperBound..<readme.endIndex)).lowerBound
        let text = readme[section.upperBound..<sectionEnd]
        let answers = text.components(separatedBy: "```json\n").dropFirst()
            .flatMap { $0.components(separatedBy: "\n```")[0].split(separator: "\n").map(String.init) }
        let commands = try ReadmeCommand.commands(in: text)
        try #require(commands.count == 5 && answers.count == 5, "\(commands.count) commands, \(answers.count) answers")
        let before = try ReadmeCommand.commands(in: readme[walk.upperBound..<section.lowerBound]).filter { $0.method != "GET" }
        try #require(before.count >= 5, "the walk's writes were found")
        let quoted = try #require(text.firstMatch(of: /"income":([0-9.]+),"uncategorised":([0-9.]+),"toBeBudgeted":(-?[0-9.]+)/))

        try await TestApp.with { app in
            for command in before {
                let response = try await app.send(command)
                #expect(response.status < 500, "\(command.method) \(command.target): \(response.text)")
            }
            for (command, answer) in zip(commands, answers) {
                let response = try await app.send(command)
                #expect(response.status < 300, "\(command.method) \(command.target): \(response.text)")
                #expect(
                    try Self.comparable(response.text) == Self.comparable(answer),
                    "\(command.method) \(command.target):\n\(response.text)\nREADME:\n\(answer)")
            }
            let month = try await app.request("GET", "/months/2026-11").object
            #expect(String(format: "%.2f", month["income"] as? Double ?? .nan) == String(quoted.1))
            #expect(String(format: "%.2f", month["uncategorised"] as? Double ?? .nan) == String(quoted.2))
            #expect(String(format: "%.2f", month["toBeBudgeted"] as? Double ?? .nan) == String(quoted.3))
        }
    }
}
