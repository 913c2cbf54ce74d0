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
        let section = try ReadmeSection("## Accounts: where the money is")
        try #require(
            section.commands.count == 5 && section.answers.count == 5, "\(section.commands.count) commands, \(section.answers.count) answers")
        try #require(section.writesBefore.count >= 5, "the walk's writes were found")
        let quoted = try #require(section.text.firstMatch(of: /"income":([0-9.]+),"uncategorised":([0-9.]+),"toBeBudgeted":(-?[0-9.]+)/))

        try await TestApp.with { app in
            try await section.replay(on: app, comparable: Self.comparable)
            let month = try await app.request("GET", "/months/2026-11").object
            #expect(String(format: "%.2f", month["income"] as? Double ?? .nan) == String(quoted.1))
            #expect(String(format: "%.2f", month["uncategorised"] as? Double ?? .nan) == String(quoted.2))
            #expect(String(format: "%.2f", month["toBeBudgeted"] as? Double ?? .nan) == String(quoted.3))
        }
    }
}
