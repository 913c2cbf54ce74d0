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

    private func export() throws {
        // One REPEATABLE READ transaction: one snapshot, in which every transaction's category is present.
        let bytes = try database.withConnection(migrating: true) { connection, _ in
            try connection.transaction(isolation: .repeatableRead) { try Exporter.export($0) }
        }
        FileHandle.standardOutput.write(Data(bytes + [UInt8(ascii: "\n")]))
    }
}
