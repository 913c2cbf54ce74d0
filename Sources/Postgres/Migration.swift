import Foundation

/// One schema migration file, `migrations/NNNN_name.sql`.
public struct Migration: Sendable, Hashable {
    /// The number before the first underscore; migrations apply in ascending order.
    public let version: Int
    /// The part after the number, e.g. `create_categories`.
    public let name: String
    /// The file's name, e.g. `0001_create_categories.sql`.
    public let fileName: String
    /// The SQL script.
    public let sql: String
    /// SHA-256 of the file's bytes, lowercase hex; recorded when applied and compared on every run.
    public let checksum: String
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
