import ArgumentParser
import BudgetAPI
import Foundation
import Logging
import Postgres

/// `budget-server seed FILE [--replace]`: load a json-server db.json, all of it or nothing (docs/configuration.md).
struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load a json-server db.json into the database.",
        discussion: """
            Every top-level array becomes a collection and every top-level object a singular resource; \
            categories, transactions and budgets go to their typed tables. An empty database is required \
            unless --replace is given.
            """
    )

    @Argument(help: "The db.json file to load.")
    var file: String

    @Flag(help: "Delete every record and collection first.")
    var replace = false

    @OptionGroup var clock: TimeZoneOptions

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await OperatorError.explaining { try seed() }
    }

    /// The bytes of a seed file, or a clear error naming it.
    static func read(_ path: String) throws -> [UInt8] {
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ValidationError("cannot read \(path): \(error.localizedDescription)")
        }
    }

    private func seed() throws {
        let bytes = try Self.read(file)
        let summary = try database.withConnection(migrating: true) { connection, _ in
            // Ledger 1: the data of a server without users (docs/configuration.md, seed).
            let summary = try Seeder.load(
                bytes, into: connection, ledger: .first, replacing: replace, clock: try clock.makeClock(checkingOn: connection))
            // A server started later, or running now, answers lists with the feed position caught up.
            try ChangeFeedCatchUp.stampPending(on: connection)
            return summary
        }
        print(summary)
    }
}
