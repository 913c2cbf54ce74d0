import Foundation
import Glibc

/// Where a cluster asked for in one folder actually runs, for a root process whose `postgres` OS user cannot
/// reach that folder (docs/configuration.md, "The embedded cluster").
///
/// Started by root, PostgreSQL runs as `postgres`, which needs search permission (x) on every folder above its
/// data. `cd "$(mktemp -d)"` leaves the working folder at mode 0700, owned by root, so the default
/// `./.budget-data` under it cannot be reached. A cluster that does not exist yet is then created in the
/// `postgres` user's home folder instead, and the asked-for path becomes a symbolic link to it, so the next start
/// with the same `--data-dir` finds the same data.
public struct ClusterPlacement: Equatable, Sendable {
    /// The folder to run the cluster in, symbolic links resolved.
    public let directory: URL
    /// The folder the `postgres` user could not enter, when that moved the cluster; nil when it runs where asked.
    public let blockedFolder: String?

    /// What to do with a folder, decided from the facts alone.
    enum Decision: Equatable {
        case runWhereAsked
        case move(blockedFolder: String)
        case refuse(blockedFolder: String)
    }

    /// Runs where asked unless root's `postgres` user is blocked; then moves a cluster that holds nothing yet and
    /// refuses to move one that does, since the data would be left behind.
    static func decide(runsAsPostgresUser: Bool, blockedFolder: String?, holdsFiles: Bool, hasHomeFolder: Bool) -> Decision {
        guard runsAsPostgresUser, let blockedFolder else { return .runWhereAsked }
        return holdsFiles || !hasHomeFolder ? .refuse(blockedFolder: blockedFolder) : .move(blockedFolder: blockedFolder)
    }

    /// The folders above `path` that exist, outermost first: the ones the server must be able to enter.
    static func existingParents(of path: String) -> [String] {
        var parents: [String] = []
        var folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        while folder.path != "/" {
            parents.insert(folder.path, at: 0)
            folder = folder.deletingLastPathComponent()
        }
        return parents.filter { FileManager.default.fileExists(atPath: $0) }
    }

    /// Decides where the cluster asked for in `requested` runs, moving it when it must; see the type's comment.
    public static func resolve(_ requested: URL) throws -> ClusterPlacement {
        let runner = CommandRunner()
        let asked = requested.standardizedFileURL.resolvingSymlinksInPath()
        let blocked = runner.runsAsPostgresUser ? try firstFolderPostgresCannotEnter(above: asked.path, runner: runner) : nil
        let home = CommandRunner.postgresHome()
        let hasHome = home.map { FileManager.default.fileExists(atPath: $0) } ?? false
        let holdsFiles = !((try? FileManager.default.contentsOfDirectory(atPath: asked.path)) ?? []).isEmpty
        switch decide(
            runsAsPostgresUser: runner.runsAsPostgresUser, blockedFolder: blocked,
            holdsFiles: holdsFiles, hasHomeFolder: hasHome)
        {
        case .runWhereAsked:
            return ClusterPlacement(directory: asked, blockedFolder: nil)
        case .refuse(let folder):
            throw LocalClusterError.directoryNotAccessible(path: asked.path, blockedFolder: folder)
        case .move(let folder):
            let moved = try makeFolder(
                in: URL(fileURLWithPath: home!).appendingPathComponent("budget-server"),
                namedAfter: asked.lastPathComponent, runner: runner)
            try? FileManager.default.removeItem(at: asked)  // an empty folder, or nothing
            try FileManager.default.createDirectory(at: asked.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: asked, withDestinationURL: moved)
            return ClusterPlacement(directory: moved, blockedFolder: folder)
        }
    }

    /// The outermost existing folder above `path` that the `postgres` user cannot enter, asked of the kernel
    /// as that user (so ACLs and group membership count); nil when it can enter them all.
    static func firstFolderPostgresCannotEnter(above path: String, runner: CommandRunner) throws -> String? {
        guard CommandRunner.postgresHome() != nil else { throw LocalClusterError.postgresUserMissing }
        let script = #"for folder do test -x "$folder" || { printf '%s' "$folder"; exit 1; }; done"#
        let (status, output) = try runner.run("/bin/sh", ["-c", script, "sh"] + existingParents(of: path))
        return status == 0 ? nil : output
    }

    /// A new folder `<parent>/<name>-XXXXXX` owned by `postgres`, with `parent` created for it when missing.
    private static func makeFolder(in parent: URL, namedAfter name: String, runner: CommandRunner) throws -> URL {
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        try runner.giveToPostgresUser(parent.path)
        // Leading dots would hide it, and a long name would push the socket path past its limit.
        let stem = String(name.drop { $0 == "." }.prefix(32))
        var template = Array("\(parent.path)/\(stem.isEmpty ? "cluster" : stem)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        let folder = String(cString: made)
        try runner.giveToPostgresUser(folder)
        return URL(fileURLWithPath: folder)
    }
}
