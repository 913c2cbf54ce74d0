import Foundation
import Testing
import APITestSupport

/// One `## ` section of README.md whose curl commands a test replays: its text, its commands, the one-line
/// JSON answers it shows for them, and the writes of the README from its walk through up to the section, which
/// make the ids and figures the section shows.
struct ReadmeSection {
    let text: Substring
    let commands: [ReadmeCommand]
    let answers: [String]
    let writesBefore: [ReadmeCommand]

    init(_ heading: String) throws {
        let readme = try ReadmeCommand.readme()
        let walk = try #require(readme.range(of: "## A walk through with curl"))
        let section = try #require(readme.range(of: heading))
        let sectionEnd = try #require(readme.range(of: "\n## ", range: section.upperBound..<readme.endIndex)).lowerBound
        text = readme[section.upperBound..<sectionEnd]
        answers = text.components(separatedBy: "```json\n").dropFirst()
            .flatMap { $0.components(separatedBy: "\n```")[0].split(separator: "\n").map(String.init) }
        commands = try ReadmeCommand.commands(in: text)
        writesBefore = try ReadmeCommand.commands(in: readme[walk.upperBound..<section.lowerBound]).filter { $0.method != "GET" }
    }

    /// Sends the writes before the section, then each of its commands, expecting the answer it shows
    /// (`comparable` leaves out what the README cannot know).
    func replay(on app: TestApp, comparable: (String) throws -> NSDictionary) async throws {
        for command in writesBefore {
            let response = try await app.send(command)
            #expect(response.status < 500, "\(command.method) \(command.target): \(response.text)")
        }
        for (command, answer) in zip(commands, answers) {
            let response = try await app.send(command)
            #expect(response.status < 300, "\(command.method) \(command.target): \(response.text)")
            #expect(
                try comparable(response.text) == comparable(answer),
                "\(command.method) \(command.target):\n\(response.text)\nREADME:\n\(answer)")
        }
    }
}
