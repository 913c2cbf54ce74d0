import Foundation

/// The `curl` commands of README.md, read so that a test can send the walk's requests to a test server and
/// hold the README's answers to the server's.
///
/// Only the shapes the README uses are read: `-X METHOD`, one URL, `-H 'Name: value'`, `-d 'body'` and
/// `--data-binary @file`, with single quotes and `\` line continuations.
struct ReadmeCommand: Equatable {
    var method: String
    /// The URL's path and query, e.g. `/categories/1?month=2026-11`.
    var target: String
    var headers: [String: String]
    var body: [UInt8]?

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func readme() throws -> String {
        try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The commands of `text` in order, continuation lines joined.
    static func commands(in text: Substring) throws -> [ReadmeCommand] {
        let joined = text.replacingOccurrences(of: "\\\n", with: " ")
        return try joined.split(separator: "\n").filter { $0.hasPrefix("curl ") }.map { try ReadmeCommand(String($0)) }
    }

    init(_ line: String) throws {
        let words = Self.words(line)
        var method: String?
        var target = ""
        var headers: [String: String] = [:]
        var body: [UInt8]?
        var index = 1
        func next() -> String {
            index += 1
            return index < words.count ? words[index] : ""
        }
        while index < words.count {
            let word = words[index]
            switch word {
            case "-X": method = next()
            case "-H":
                let header = next().split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                headers[header[0]] = header.count > 1 ? header[1] : ""
            case "-d": body = Array(next().utf8)
            case "--data-binary":
                let file = next()
                guard file.hasPrefix("@") else { throw ReadmeError.unsupported(line) }
                body = try Array(Data(contentsOf: Self.root.appendingPathComponent(String(file.dropFirst()))))
            case _ where word.hasPrefix("http://"):
                guard let slash = word.dropFirst("http://".count).firstIndex(of: "/") else { throw ReadmeError.unsupported(line) }
                target = String(word[slash...])
            case _ where word.hasPrefix("-"):
                break  // -s, -i, -si, -o FILE's dash: output options only
            default:
                break
            }
            index += 1
        }
        guard !target.isEmpty else { throw ReadmeError.unsupported(line) }
        self.method = method ?? (body == nil ? "GET" : "POST")
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// Shell words: spaces split them, single quotes keep text as it is.
    private static func words(_ line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quoted = false
        for character in line {
            if character == "'" {
                quoted.toggle()
                inWord = true
            } else if character == " ", !quoted {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    enum ReadmeError: Error {
        case unsupported(String)
    }
}
