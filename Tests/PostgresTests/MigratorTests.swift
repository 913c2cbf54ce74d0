import Crypto
import Foundation
import Logging
import Migrations
import Postgres
import TestSupport
import Testing

@Suite("Migrator")
struct MigratorTests {
    private let logger = Logger(label: "MigratorTests")

    /// The migrator of a folder's migrations.
    private func makeMigrator(_ directory: URL) throws -> Migrator {
        Migrator(migrations: try Migration.read(from: directory), logger: logger)
    }

    /// A temporary migrations folder holding `files` (name → SQL).
    private func folder(_ files: [String: String]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, sql) in files {
            try sql.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return url
    }

    private let files = [
        "0001_create_things.sql": "CREATE TABLE things (id int CONSTRAINT things_pkey PRIMARY KEY);",
        "0002_add_label.sql": "ALTER TABLE things ADD COLUMN label text; INSERT INTO things VALUES (1, 'é');",
        "0010_create_others.sql": "CREATE TABLE others (id int);",
        "README.md": "not a migration",
    ]

    private func recorded(_ connection: Connection) throws -> [(Int, String, String)] {
        try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version").map {
            (try $0.decode(Int.self, at: 0), try $0.decode(String.self, at: 1), try $0.decode(String.self, at: 2))
        }
    }

    @Test func appliesInOrderRecordsChecksumsAndIsIdempotent() async throws {
        let directory = try folder(files)
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        let migrator = try makeMigrator(directory)
        let applied = try migrator.migrate(on: connection)
        #expect(applied.map(\.version) == [1, 2, 10])
        let rows = try recorded(connection)
        #expect(rows.map(\.0) == [1, 2, 10])
        #expect(rows.map(\.1) == ["create_things", "add_label", "create_others"])
        // SHA-256 of the file bytes, the same as `sha256sum` prints.
        #expect(rows[1].2 == (try sha256sum(directory.appendingPathComponent("0002_add_label.sql"))))
        #expect(try migrator.migrate(on: connection).isEmpty)
        #expect(try migrator.pending(on: connection).isEmpty)
        #expect(try connection.query("SELECT label FROM things")[0].decode(String.self, at: 0) == "é")
    }

    @Test func changedChecksumStopsWithAnErrorNamingTheFile() async throws {
        let directory = try folder(files)
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        try makeMigrator(directory).migrate(on: connection)
        try "ALTER TABLE things ADD COLUMN label varchar(10);"
            .write(to: directory.appendingPathComponent("0002_add_label.sql"), atomically: true, encoding: .utf8)
        let edited = try makeMigrator(directory)
        #expect { try edited.migrate(on: connection) } throws: { error in
            guard case .checksumMismatch(let file, _, _) = error as? MigrationError else { return false }
            return file == "0002_add_label.sql" && "\(error)".contains("0002_add_label.sql")
        }
    }

    @Test func dryRunListsPendingWithoutApplying() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        let migrator = try makeMigrator(try folder(files))
        #expect(
            try migrator.dryRun(on: connection).map(\.fileName)
                == ["0001_create_things.sql", "0002_add_label.sql", "0010_create_others.sql"])
        let tables = try connection.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        #expect(try tables[0].decode(Int.self, at: 0) == 0)
    }

    @Test func failingMigrationRollsBackAndNamesTheFile() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        let migrator = try makeMigrator(
            try folder([
                "0001_ok.sql": "CREATE TABLE a (id int);",
                "0002_broken.sql": "CREATE TABLE b (id int); SELECT no_such_column FROM a;",
            ]))
        #expect { try migrator.migrate(on: connection) } throws: { error in
            "\(error)".contains("0002_broken.sql")
        }
        #expect(try recorded(connection).map(\.0) == [1])
        #expect(try connection.query("SELECT to_regclass('b') IS NULL")[0].decode(Bool.self, at: 0))
    }

    @Test func badFileNamesAndDuplicateVersionsAreErrors() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        let badName = try folder(["create.sql": "SELECT 1;"])
        #expect(throws: MigrationError.self) { try Migration.read(from: badName) }
        let duplicate = try makeMigrator(try folder(["0001_a.sql": "SELECT 1;", "1_b.sql": "SELECT 2;"]))
        #expect(throws: MigrationError.self) { try duplicate.pending(on: connection) }
    }

    @Test func concurrentMigratorsApplyEachMigrationOnce() async throws {
        let url = try await TestDatabase.empty()
        let directory = try folder([
            "0001_slow.sql": "CREATE TABLE slow (id int); SELECT pg_sleep(0.3);",
            "0002_next.sql": "CREATE TABLE next (id int);",
        ])
        let migrator = try makeMigrator(directory)
        let results = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await runOffCooperativePool { try migrator.migrate(on: try Connection.connect(to: url)).map(\.version) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.flatMap { $0 }.sorted() == [1, 2])
        #expect(results.contains([]))
        #expect(try recorded(try Connection.connect(to: url)).map(\.0) == [1, 2])
    }
}

extension MigratorTests {
    /// What the binary embeds is exactly migrations/*.sql, byte for byte, so adding a file needs no code change.
    @Test func theEmbeddedMigrationsAreTheFolderAsBuilt() throws {
        let folder = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("migrations")
        let embedded = try EmbeddedMigrations.all()
        #expect(embedded.map(\.fileName) == (try Migration.read(from: folder)).map(\.fileName))
        for migration in embedded {
            #expect(Array(migration.sql.utf8) == [UInt8](try Data(contentsOf: folder.appendingPathComponent(migration.fileName))))
        }
    }
}

/// The checksum as swift-crypto computes it, an independent check of the one PostgreSQL stored.
///
/// Not `Process` running sha256sum: Foundation's `Process.run()` reads past a buffer under AddressSanitizer
/// (swiftlang/swift-corelibs-foundation#5472), which aborted whole sanitizer runs.
private func sha256sum(_ file: URL) throws -> String {
    SHA256.hash(data: try Data(contentsOf: file)).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
}

private extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
