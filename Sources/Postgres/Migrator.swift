import Foundation
import Logging

/// Applies a list of migrations in version order, each in its own transaction.
///
/// The list comes from the caller: the executable passes the migrations embedded at build time, or those
/// of `--migrations-dir` (`Migration.read(from:)`); this type knows nothing of whose schema it builds.
/// Applied migrations are recorded in `schema_migrations` with a SHA-256 checksum of the file; a file
/// changed after it was applied stops the run with `MigrationError.checksumMismatch`. `migrate` holds a
/// session advisory lock for the whole run and re-reads the applied versions under it, so two processes
/// migrating one database at once never both apply a migration. Files must not contain BEGIN/COMMIT.
public struct Migrator: Sendable {
    /// The migrations to apply, in any order; `pending` sorts them and rejects a version used twice.
    public let migrations: [Migration]
    private let logger: Logger

    /// The advisory lock key every budget-server process agrees on ("budget-m" in ASCII).
    private static let lockKey: Int64 = 0x6275_6467_6574_2D6D

    public init(migrations: [Migration], logger: Logger) {
        self.migrations = migrations
        self.logger = logger
    }

    /// Migrations not yet applied, in order; checks the checksums of the applied ones.
    public func pending(on connection: Connection) throws -> [Migration] {
        let migrations = try ordered()
        let applied = try appliedChecksums(on: connection)
        for migration in migrations {
            guard let recorded = applied[migration.version] else { continue }
            let current = try checksum(of: migration, on: connection)
            if recorded != current {
                throw MigrationError.checksumMismatch(file: migration.fileName, recorded: recorded, current: current)
            }
        }
        return migrations.filter { applied[$0.version] == nil }
    }

    /// Lists what `migrate` would apply, changing nothing (not even creating `schema_migrations`).
    public func dryRun(on connection: Connection) throws -> [Migration] {
        let migrations = try pending(on: connection)
        for migration in migrations {
            logger.info("would apply migration", metadata: ["file": "\(migration.fileName)"])
        }
        return migrations
    }

    /// Applies every pending migration and returns those it applied (empty when up to date).
    @discardableResult
    public func migrate(on connection: Connection) throws -> [Migration] {
        try connection.execute("SELECT pg_advisory_lock(\(Self.lockKey))")
        defer { try? connection.execute("SELECT pg_advisory_unlock(\(Self.lockKey))") }
        try connection.execute(script: Self.createTableSQL)
        // Read under the lock: another process may have applied some while we waited.
        let migrations = try pending(on: connection)
        for migration in migrations {
            try connection.transaction { connection in
                do {
                    try connection.execute(script: migration.sql)
                } catch let error as PostgresError {
                    throw MigrationError.failed(file: migration.fileName, error: error)
                }
                try connection.execute(
                    """
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(try checksum(of: migration, on: connection)))
                    """)
            }
            logger.info("applied migration", metadata: ["file": "\(migration.fileName)"])
        }
        return migrations
    }

    /// The migrations in version order; two with one version are an error.
    private func ordered() throws(MigrationError) -> [Migration] {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (previous, next) in zip(sorted, sorted.dropFirst()) where previous.version == next.version {
            throw MigrationError.duplicateVersion(next.version, files: [previous.fileName, next.fileName])
        }
        return sorted
    }

    /// SHA-256 of the migration's UTF-8 text (the file's bytes), lowercase hex; computed by the server, so
    /// no crypto package is needed.
    private func checksum(of migration: Migration, on connection: Connection) throws -> String {
        try connection.query("SELECT encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex')")[0].decode(String.self, at: 0)
    }

    /// Recorded checksums by version; empty when `schema_migrations` does not exist yet.
    private func appliedChecksums(on connection: Connection) throws -> [Int: String] {
        let exists = try connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL")[0].decode(Bool.self, at: 0)
        guard exists else { return [:] }
        var checksums: [Int: String] = [:]
        for row in try connection.query("SELECT version, checksum FROM schema_migrations") {
            checksums[try row.decode(Int.self, at: 0)] = try row.decode(String.self, at: 1)
        }
        return checksums
    }

    private static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version integer CONSTRAINT schema_migrations_pkey PRIMARY KEY,
            name text NOT NULL,
            checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        );
        COMMENT ON TABLE schema_migrations IS 'One row per applied migrations/NNNN_name.sql file; written by budget-server migrate.';
        COMMENT ON COLUMN schema_migrations.version IS 'The NNNN number of the migration file.';
        COMMENT ON COLUMN schema_migrations.name IS 'The file name after the number, without .sql.';
        COMMENT ON COLUMN schema_migrations.checksum IS 'SHA-256 of the file bytes, lowercase hex; a changed file stops start-up.';
        COMMENT ON COLUMN schema_migrations.applied_at IS 'When the migration was applied.';
        """
}
