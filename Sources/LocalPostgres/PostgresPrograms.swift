import Foundation

/// The folder holding the PostgreSQL server programs, found once per cluster operation.
struct PostgresPrograms: Sendable {
    let binDirectory: String

    /// Where to look when no search path is given: every folder on `PATH`, then Debian's
    /// `/usr/lib/postgresql/<version>/bin` folders, highest version first.
    static func defaultSearchPath() -> [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let onPath = path.split(separator: ":").map(String.init)
        let versionsRoot = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: versionsRoot)) ?? []
        let byVersion = versions.sorted { (Double($0) ?? 0) > (Double($1) ?? 0) }
        return onPath + byVersion.map { "\(versionsRoot)/\($0)/bin" }
    }

    /// Finds the first folder in `searchPath` holding both `initdb` and `pg_ctl`.
    ///
    /// A `pg_ctl` that is a symlink (e.g. `/usr/local/bin/pg_ctl`) is followed to its real folder, where
    /// the companion programs such as `createdb` live.
    static func find(in searchPath: [String]) throws -> PostgresPrograms {
        let fileManager = FileManager.default
        for directory in searchPath
        where ["initdb", "pg_ctl"].allSatisfy({ fileManager.isExecutableFile(atPath: "\(directory)/\($0)") }) {
            let pgCtl = URL(fileURLWithPath: "\(directory)/pg_ctl").resolvingSymlinksInPath()
            return PostgresPrograms(binDirectory: pgCtl.deletingLastPathComponent().path)
        }
        throw LocalClusterError.postgresNotInstalled(searched: searchPath)
    }

    /// The path of a program in the same folder as `pg_ctl`, checked to exist.
    func program(_ name: String) throws -> String {
        let path = "\(binDirectory)/\(name)"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw LocalClusterError.programMissing(name: name, directory: binDirectory)
        }
        return path
    }
}
