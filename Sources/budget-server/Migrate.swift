import ArgumentParser
import Logging
import Postgres

/// `budget-server migrate`: apply pending migrations, or list them with `--dry-run`.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations (those built in, or --migrations-dir).")

    @Flag(help: "List the migrations that would be applied, and apply none.")
    var dryRun = false

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await OperatorError.explaining { try migrate() }
    }

    private func migrate() throws {
        let migrations = try database.withConnection(migrating: false) { connection, migrator in
            dryRun ? try migrator.dryRun(on: connection) : try migrator.migrate(on: connection)
        }
        let verb = dryRun ? "would apply" : "applied"
        if migrations.isEmpty { print("nothing to apply: the database is up to date") }
        for migration in migrations { print("\(verb) \(migration.fileName)") }
    }
}
