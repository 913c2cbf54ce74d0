import Logging
import Postgres
import TestSupport

/// The project's migrations applied up to a version, as a server of that version would have.
enum Schema {
    /// Applies the migrations up to `version` that `url` has not applied yet.
    static func migrate(_ url: String, through version: Int) async throws {
        let migrations = try TestDatabase.migrations().filter { $0.version <= version }
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            try Migrator(migrations: migrations, logger: Logger(label: "test")).migrate(on: connection)
        }
    }
}
