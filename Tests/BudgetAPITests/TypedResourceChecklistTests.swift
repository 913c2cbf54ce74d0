@testable import BudgetAPI
import Foundation
import Testing

/// docs/architecture.md's "Adding a typed resource" is held to the code, so that the checklist a
/// contributor follows stays true: every file, type, member and SQL function it names exists (a `Thing`
/// stands for each registered resource in turn), and every registered resource has each piece the
/// checklist asks for. A moved or renamed file, a type the docs still name, or a resource that skipped a
/// step fails here.
@Suite struct TypedResourceChecklistTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The section's text, from its heading to the next of its level.
    static func checklist() throws -> String {
        let lines = try text("docs/architecture.md").split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0 == "## Adding a typed resource" })
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
        return lines[start..<end].joined(separator: "\n")
    }

    /// Every file of the repository that a checklist may name, relative to the root.
    static let files: [String] = {
        var paths: [String] = []
        for folder in ["Sources", "Tests", "fuzz", "migrations", "docs", "bench", ".ci"] {
            let base = root.appendingPathComponent(folder)
            guard let walk = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walk {
                paths.append(folder + "/" + url.path.dropFirst(base.path.count + 1))
            }
        }
        let top = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return paths + top
    }()

    /// The Swift sources and tests, each read once.
    static let sources: String = files.filter { ($0.hasPrefix("Sources/") || $0.hasPrefix("Tests/")) && $0.hasSuffix(".swift") }
        .compactMap { try? text($0) }.joined(separator: "\n")

    static let migrations: String = files.filter { $0.hasPrefix("migrations/") && $0.hasSuffix(".sql") }
        .compactMap { try? text($0) }.joined(separator: "\n")

    /// `token` with `Thing`/`Things`/`thing`/`things` put for each resource's names, or itself alone.
    static func expanded(_ token: String) -> [String] {
        guard token.contains("Thing") || token.contains("thing") else { return [token] }
        return TypedResources.all.map { resource in
            token.replacingOccurrences(of: "Things", with: resource.collection.capitalized)
                .replacingOccurrences(of: "Thing", with: resource.recordName.capitalized)
                .replacingOccurrences(of: "things", with: resource.collection)
                .replacingOccurrences(of: "thing", with: resource.recordName)
        }
    }

    /// Names of other projects the section compares with.
    static let elsewhere: Set<String> = ["RouteCollection"]

    /// The types the sources and tests declare.
    static let types: Set<String> = Set(
        sources.matches(of: /(?:struct|enum|protocol|class|actor|typealias) ([A-Za-z_][A-Za-z0-9_]*)/).map { String($0.1) })

    /// The properties, functions and enum cases they declare (each name of a `case a, b` too).
    static let memberNames: Set<String> = {
        var names = Set(sources.matches(of: /\b(?:let|var|func) ([A-Za-z_][A-Za-z0-9_]*)/).map { String($0.1) })
        for line in sources.matches(
            of: /\bcase ([a-z][A-Za-z0-9_]*(?:\([^)\n]*\))?(?:, [a-z][A-Za-z0-9_]*(?:\([^)\n]*\))?)*)$/.anchorsMatchLineEndings())
        {
            for item in line.1.split(separator: ", ") { names.insert(String(item.prefix { $0 != "(" })) }
        }
        return names
    }()

    static func isDeclared(type name: String) -> Bool {
        elsewhere.contains(name) || files.contains("Sources/\(name)") || types.contains(name)
    }

    static func isDeclared(member name: String) -> Bool { memberNames.contains(name) }

    /// The checklist's code spans: file paths, type and member names, SQL functions.
    static func spans() throws -> [String] {
        try checklist().matches(of: /`([^`\n]+)`/).map { String($0.1) }
    }

    static func isPath(_ span: String) -> Bool {
        span.wholeMatch(of: /[\w.+\/-]+\.(swift|sql|yaml|md|toml)|[\w.-]+\/[\w.\/+-]*/) != nil
    }

    @Test func everyFileTheChecklistNamesExists() throws {
        var checked = 0
        for span in try Self.spans() where Self.isPath(span) {
            // A migration's number is the next free one: each resource's own is checked below instead.
            guard !span.hasPrefix("/"), !span.contains("NNNN") else { continue }
            for path in Self.expanded(span).map({ $0.hasSuffix("/") ? String($0.dropLast()) : $0 }) {
                let found = Self.files.contains { $0 == path || $0.hasSuffix("/" + path) }
                #expect(found, "docs/architecture.md names \(path), which is not in the repository")
                checked += 1
            }
        }
        #expect(checked > 20, "\(checked) paths checked")
    }

    @Test func everyTypeAndMemberTheChecklistNamesIsDeclared() throws {
        var checked = 0
        for span in try Self.spans() where !Self.isPath(span) {
            for name in Self.expanded(span) {
                if name.wholeMatch(of: /[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*/) != nil {
                    let parts = name.split(separator: ".").map(String.init)
                    #expect(Self.isDeclared(type: parts[0]), "docs/architecture.md names \(parts[0]), which Sources/ do not declare")
                    for member in parts.dropFirst() {
                        #expect(
                            Self.isDeclared(member: member) || Self.isDeclared(type: member),
                            "docs/architecture.md names \(name), but no \(member) is declared")
                    }
                    checked += 1
                } else if name.wholeMatch(of: /[a-z]+(_[a-z0-9]+)+/) != nil {
                    // A SQL name: a function or trigger of the migrations.
                    #expect(Self.migrations.contains(name), "docs/architecture.md names \(name), which no migration has")
                    checked += 1
                }
            }
        }
        #expect(checked > 20, "\(checked) names checked")
    }

    /// Each registered resource has what the checklist's steps give one.
    @Test(arguments: TypedResources.names)
    func everyResourceHasEachPiece(collection: String) throws {
        let resource = try #require(TypedResources.all.first { $0.collection == collection })
        let (folder, thing) = (collection.capitalized, resource.recordName.capitalized)
        // 1. The migration creating its table.
        #expect(Self.migrations.contains("CREATE TABLE \(collection) ("), "no migration creates \(collection)")
        // 2. The model file (fields and members) and the resource's file.
        let model = try Self.text("Sources/BudgetAPI/\(folder)/\(thing).swift")
        #expect(model.contains("struct \(thing)Fields"), "\(thing).swift has no \(thing)Fields")
        #expect(model.contains("enum \(thing)Record") && model.contains("static let members = RecordMembers"))
        let routes = try Self.text("Sources/BudgetAPI/\(folder)/\(thing)Routes.swift")
        #expect(routes.contains("struct \(folder): "), "\(thing)Routes.swift does not declare \(folder)")
        // 4. Its table's keys map to answers (ConstraintMappingTests checks each against the schema).
        #expect(TypedResources.constraints["\(collection)_pkey"]?.collection == collection)
        // 5. Its paths in openapi.yaml.
        let openAPI = try Self.text("openapi.yaml")
        #expect(openAPI.contains("\n  /\(collection):\n") && openAPI.contains("\n  /\(collection)/{id}:\n"), "openapi.yaml lacks /\(collection)")
        // 6. Its routes in LedgerIsolationTests' table.
        let isolation = try Self.text("Tests/BudgetAPITests/LedgerIsolationTests.swift")
        for method in ["GET", "POST"] {
            #expect(isolation.contains("method: \"\(method)\", pattern: \"/\(collection)\""), "LedgerIsolationTests lacks \(method) /\(collection)")
        }
        for method in ["GET", "PUT", "PATCH", "DELETE"] {
            #expect(
                isolation.contains("method: \"\(method)\", pattern: \"/\(collection)/:id\""),
                "LedgerIsolationTests lacks \(method) /\(collection)/:id")
        }
        // 7. Its docs and tests.
        #expect(try Self.text("docs/api.md").contains("/\(collection)"), "docs/api.md does not mention /\(collection)")
        #expect(try Self.text("README.md").contains("/\(collection)"), "README.md does not mention /\(collection)")
        #expect(Self.files.contains("Tests/BudgetAPITests/\(thing)Tests.swift"), "no \(thing)Tests.swift")
    }
}
