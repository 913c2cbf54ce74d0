import ArgumentParser
import BudgetAPI
import Foundation
import Logging
import Postgres

/// `budget-server export`: print the whole database as a db.json that `seed` loads back unchanged (docs/configuration.md).
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the whole database as a json-server db.json on standard output."
    )

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await OperatorError.explaining { try export() }
    }

    /// Writes each piece as the exporter makes it, so an export of any size holds one batch in memory.
    private func export() throws {
        // One REPEATABLE READ transaction: one snapshot, in which every transaction's category is present.
        try database.withConnection(migrating: true) { connection, _ in
            try connection.transaction(isolation: .repeatableRead) { connection in
                let exporter = try Exporter(on: connection, ledger: .first)  // ledger 1, as `seed` writes
                while let piece = try exporter.next(on: connection) {
                    try FileHandle.standardOutput.write(contentsOf: piece)
                }
            }
        }
        try FileHandle.standardOutput.write(contentsOf: [UInt8(ascii: "\n")])
    }
}
