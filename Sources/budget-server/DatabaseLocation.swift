import Foundation
import LocalPostgres
import Logging
import Postgres

/// Where the data lives: the PostgreSQL the user named, or the embedded cluster started for them (docs/configuration.md).
struct DatabaseLocation {
    /// The embedded cluster's database; the cluster's own `postgres` database stays for administration.
    static let embeddedDatabaseName = "budget"

    let url: String
    /// The cluster this process started, to stop on exit; nil when the user gave a URL or it was already running.
    let cluster: LocalCluster?

    static func resolve(_ options: DatabaseOptions, logger: Logger) throws -> DatabaseLocation {
        if let url = try Setting.resolve(options.databaseURL, environment: "DATABASE_URL") {
            return DatabaseLocation(url: url, cluster: nil)
        }
        let requested = try options.resolvedDataDirectory()
        let placement = try ClusterPlacement.resolve(requested)
        if let blocked = placement.blockedFolder {
            // docs/configuration.md, "The embedded cluster": root runs PostgreSQL as `postgres`.
            logger.notice(
                """
                the postgres OS user cannot enter \(blocked), so the embedded cluster lives in \
                \(placement.directory.path); \(requested.standardizedFileURL.path) links to it
                """)
        }
        let cluster = LocalCluster(directory: placement.directory, logger: logger)
        // A cluster another process started (a running server, while `export` runs) is that process's to stop.
        let isOurs = try !cluster.isRunning()
        do {
            let administration = try cluster.start()
            try createDatabaseIfMissing(embeddedDatabaseName, administrationURL: administration)
            logger.info(
                "embedded PostgreSQL is up",
                metadata: [
                    "directory": "\(cluster.directory.path)",
                    "psql": "psql -h \(cluster.socketDirectory) -U postgres \(embeddedDatabaseName)",
                ])
            return DatabaseLocation(url: cluster.url(database: embeddedDatabaseName), cluster: isOurs ? cluster : nil)
        } catch {
            if isOurs { try? cluster.stop() }
            throw error
        }
    }

    private static func createDatabaseIfMissing(_ name: String, administrationURL: String) throws {
        let connection = try Connection.connect(to: administrationURL)
        defer { connection.close() }
        let existing = try connection.query("SELECT 1 FROM pg_database WHERE datname = \(name)")
        if existing.count == 0 {
            // CREATE DATABASE takes no parameters, so the name goes in as a quoted identifier.
            try connection.execute("CREATE DATABASE \(Query(identifier: name))")
        }
    }

    /// Stops the embedded cluster, if this process started one.
    func close(logger: Logger) {
        guard let cluster else { return }
        do {
            try cluster.stop()
        } catch {
            logger.error("could not stop the embedded PostgreSQL: \(error)")
        }
    }
}

extension DatabaseOptions {
    /// Runs a one-off command's `body` on one connection to the chosen database, starting and stopping the
    /// embedded cluster around it; `migrating` applies pending migrations first (a fresh cluster has no tables).
    func withConnection<T>(migrating: Bool, _ body: (Connection, Migrator) throws -> T) throws -> T {
        let logger = makeLogger(level: try resolvedLogLevel())
        let location = try DatabaseLocation.resolve(self, logger: logger)
        defer { location.close(logger: logger) }
        let migrator = try makeMigrator(logger: logger)
        let connection = try Connection.connect(to: location.url)
        defer { connection.close() }
        if migrating { try migrator.migrate(on: connection) }
        return try body(connection, migrator)
    }
}
