import Foundation

/// One schema migration: a file `NNNN_name.sql` and its SQL, wherever it was read from (embedded in the
/// binary at build time, or a folder given at run time).
public struct Migration: Sendable, Hashable {
    /// The number before the first underscore; migrations apply in ascending order.
    public let version: Int
    /// The part after the number, e.g. `create_categories`.
    public let name: String
    /// The file's name, e.g. `0001_create_categories.sql`.
    public let fileName: String
    /// The SQL script.
    public let sql: String

    /// A migration named by `fileName`, which must be `NNNN_name.sql`.
    public init(fileName: String, sql: String) throws(MigrationError) {
        guard fileName.hasSuffix(".sql") else { throw .invalidFileName(fileName) }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]),
            stem[..<underscore].allSatisfy(\.isASCII)
        else {
            throw .invalidFileName(fileName)
        }
        self.version = version
        self.name = String(stem[stem.index(after: underscore)...])
        self.fileName = fileName
        self.sql = sql
    }

    /// The `*.sql` files of `directory`, for `--migrations-dir`; other files are ignored.
    public static func read(from directory: URL) throws -> [Migration] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            throw MigrationError.directoryMissing(path: directory.path)
        }
        return try names.sorted().filter { $0.hasSuffix(".sql") }.map { fileName in
            let data = try Data(contentsOf: directory.appendingPathComponent(fileName))
            guard let sql = String(data: data, encoding: .utf8) else { throw MigrationError.notUTF8(file: fileName) }
            return try Migration(fileName: fileName, sql: sql)
        }
    }
}

/// Why migrations could not be read or applied; every case names the file concerned.
public enum MigrationError: Error, CustomStringConvertible, Sendable {
    case directoryMissing(path: String)
    case invalidFileName(String)
    case duplicateVersion(Int, files: [String])
    case notUTF8(file: String)
    /// An applied migration's file was edited afterwards; applied migrations are immutable.
    case checksumMismatch(file: String, recorded: String, current: String)
    case failed(file: String, error: PostgresError)

    public var description: String {
        switch self {
        case .directoryMissing(let path):
            return "migrations folder \(path) does not exist"
        case .invalidFileName(let name):
            return "migration file \(name) is not named NNNN_name.sql"
        case .duplicateVersion(let version, let files):
            return "migration version \(version) is used by more than one file: \(files.joined(separator: ", "))"
        case .notUTF8(let file):
            return "migration \(file) is not valid UTF-8"
        case .checksumMismatch(let file, let recorded, let current):
            return "migration \(file) was changed after it was applied (recorded checksum \(recorded), file now \(current)); "
                + "applied migrations must not be edited: restore the file and add a new migration instead"
        case .failed(let file, let error):
            // For operators at the command line, so the server's message is included.
            return "migration \(file) failed: \(error.message ?? error.description)"
                + (error.detail.map { " (\($0))" } ?? "")
        }
    }
}
