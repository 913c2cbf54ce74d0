@testable import BudgetAPI
import Foundation
import Testing
import APITestSupport
import BudgetCore

/// The lists that name resources are checked against the places that serve them: `TypedResources` for the
/// typed ones, `CollectionNames.reserved` for the server's own routes, and openapi.yaml's copy of the latter.
@Suite struct TypedResourceRegistryTests {
    static let openAPI = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("openapi.yaml")

    /// The names in the `not: enum:` of the db.json document's `propertyNames` in openapi.yaml.
    static func reservedNamesInOpenAPI() throws -> Set<String> {
        let lines = try String(contentsOf: openAPI, encoding: .utf8).split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("    DatabaseDocument:") })
        let not = try #require(lines[start...].firstIndex { $0.trimmingCharacters(in: .whitespaces) == "not:" })
        let line = lines[not + 1].trimmingCharacters(in: .whitespaces)
        let list = try #require(line.wholeMatch(of: /enum: \[(.*)\]/)?.1)
        return Set(list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    @Test func openAPIReservesTheNamesTheSeedRefuses() throws {
        #expect(try Self.reservedNamesInOpenAPI() == CollectionNames.reserved)
    }

    @Test func typedAndReservedNamesDoNotOverlap() {
        #expect(CollectionNames.reserved.isDisjoint(with: TypedResources.names))
        #expect(Set(TypedResources.names).count == TypedResources.names.count)
    }

    /// A path of each reserved name's own routes, which a generic collection of that name would shadow.
    static let reservedProbes = [
        "db": "/db", "health": "/health", "ready": "/ready", "metrics": "/metrics", "changes": "/changes",
        "batch": "/batch", "months": "/months/2026-11", "reports": "/reports/spending?from=2026-11&to=2026-11",
        "ledgers": "/ledgers", "auth": "/auth/me", "transfers": "/transfers",
    ]

    /// A reserved name is answered by a route of its own, never by the generic collections' 404; a typed
    /// name by its typed list, its feed filter and the home page's counts.
    @Test func everyNameReachesItsOwnRoute() async throws {
        #expect(Set(Self.reservedProbes.keys) == CollectionNames.reserved)
        try await TestApp.with { app in
            for (name, path) in Self.reservedProbes.sorted(by: { $0.key < $1.key }) {
                let answer = try await app.request("GET", path)
                #expect(answer.status != 404, "GET \(path) for \(name): \(answer.status) \(answer.text)")
            }
            let home = try await app.request("GET", "/")
            for name in TypedResources.names {
                let list = try await app.request("GET", "/\(name)")
                #expect(list.status == 200 && list.text == "[]", "GET /\(name): \(list.status) \(list.text)")
                let feed = try await app.request("GET", "/changes?collection=\(name)")
                #expect(feed.status == 200, "GET /changes?collection=\(name): \(feed.status) \(feed.text)")
                #expect(home.text.contains(#"<a href="/\#(name)">/\#(name)</a></td><td>typed</td><td class="count">0</td>"#))
            }
        }
    }
}
