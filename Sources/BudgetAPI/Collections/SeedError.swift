import BudgetCore
import HTTPServer

/// Why a seed file (or a `PUT /db` body) was not loaded: each problem at the JSON path where it is.
public enum SeedError: Error, ProblemConvertible, CustomStringConvertible {
    /// One problem inside the file, e.g. `$.posts[3]: record is not an object`.
    public struct Issue: Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "\(path): \(message)" }
    }

    /// The file is malformed; nothing was written.
    case invalid([Issue])
    /// The database already holds data and the caller did not ask to replace it; nothing was written.
    case databaseNotEmpty

    public var description: String {
        switch self {
        case .invalid(let issues):
            return "the seed was not loaded (nothing was written):\n" + issues.map { "  \($0)" }.joined(separator: "\n")
        case .databaseNotEmpty:
            return "the database already holds data, so the seed was not loaded; pass --replace to delete everything first"
        }
    }

    public var problem: Problem {
        switch self {
        case .invalid(let issues):
            let errors = issues.map { Problem.FieldError(field: $0.path, message: $0.message) }
            return Problem(.badRequest, detail: "the database document is malformed; nothing was written", errors: errors)
        case .databaseNotEmpty:
            return Problem(.conflict, detail: description)
        }
    }
}

/// Writes JSON paths such as `$.posts[3].id` or `$["odd name"]` for seed issues.
enum SeedPath {
    static let root = "$"

    static func member(_ path: String, _ name: String) -> String {
        let isPlain =
            !name.isEmpty && name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0 == "_" || ("0"..."9").contains($0) }
            && !("0"..."9").contains(name.unicodeScalars.first!)
        return isPlain ? "\(path).\(name)" : "\(path)[\(JSONWriter.string(.string(name)))]"
    }

    static func element(_ path: String, _ index: Int) -> String {
        "\(path)[\(index)]"
    }
}
