import Foundation
import Logging

/// Applies `NNNN_name.sql` files from one folder in version order, each in its own transaction.
///
/// Applied migrations are recorded in `schema_migrations` with a SHA-256 checksum of the file; a file
/// changed after it was applied stops the run with `MigrationError.checksumMismatch`. `migrate` holds a
/// session advisory lock for the whole run and re-reads the applied versions under it, so two processes
/// migrating one database at once never both apply a migration. Files must not contain BEGIN/COMMIT.
public struct Migrator: Sendable {
    public let directory: URL
    private let logger: Logger

    /// The advisory lock key every budget-server process agrees on ("budget-m" in ASCII).
    private static let lockKey: Int64 = 0x6275_6467_6574_2D6D

    public init(directory: URL, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    /// Migrations not yet applied, in order; checks the checksums of the applied ones.
    public func pending(on connection: Connection) throws -> [Migration] {
        let migrations = try readMigrations(on: connection)
        let applied = try appliedChecksums(on: connection)
        for migration in migrations {
            if let recorded = applied[migration.version], recorded != migration.checksum {
                throw MigrationError.checksumMismatch(file: migration.fileName, recorded: recorded, current: migration.checksum)
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
                try connection.execute("""
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """)
            }
            logger.info("applied migration", metadata: ["file": "\(migration.fileName)"])
        }
        return migrations
    }

    /// Reads and orders the folder's migration files; the checksum is computed by the server
    /// (`sha256` over the UTF-8 text, which is the file's bytes), so no crypto package is needed.
    private func readMigrations(on connection: Connection) throws -> [Migration] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            throw MigrationError.directoryMissing(path: directory.path)
        }
        var migrations: [Migration] = []
        for fileName in names.sorted() where fileName.hasSuffix(".sql") {
            let stem = fileName.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]),
                  stem[..<underscore].allSatisfy(\.isASCII) else {
                throw MigrationError.invalidFileName(fileName)
            }
            let data = try Data(contentsOf: directory.appendingPathComponent(fileName))
            guard let sql = String(data: data, encoding: .utf8) else { throw MigrationError.notUTF8(file: fileName) }
            let checksum = try connection.query("SELECT encode(sha256(convert_to(\(sql), 'UTF8')), 'hex')")[0]
                .decode(String.self, at: 0)
            migrations.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]),
                                        fileName: fileName, sql: sql, checksum: checksum))
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError.duplicateVersion(next.version, files: [previous.fileName, next.fileName])
        }
        return migrations
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
