import Foundation
import LocalPostgres
import Logging
#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL cluster of one test's own, for tests that stop or crash the database, which they must
/// not do to the cluster every other suite shares (`TestDatabase`).
///
/// It holds one empty database, `budget`; the server under test migrates it. Every blocking step (initdb,
/// pg_ctl) runs off the cooperative pool. `remove()` stops the cluster and deletes its folder.
public struct ScratchCluster: Sendable {
    public let cluster: LocalCluster

    public static let databaseName = "budget"

    /// Creates and starts a cluster in a new folder under /tmp (short, for the socket path limit).
    ///
    /// - Parameter settings: extra `postgresql.conf` settings; the default turns off `fsync`, which only
    ///   guards against an operating-system crash, which no test can cause anyway.
    public static func start(settings: [String: String] = ["fsync": "off"]) async throws -> ScratchCluster {
        var template = Array("/tmp/ops-XXXXXX".utf8CString)
        guard let folder = mkdtemp(&template) else { throw ChildProcessError.system("mkdtemp", errno) }
        let scratch = ScratchCluster(
            cluster: LocalCluster(
                directory: URL(fileURLWithPath: String(cString: folder)), logger: quietLogger, settings: settings))
        do {
            try await runOffCooperativePool {
                _ = try scratch.cluster.start()
                try scratch.cluster.createDatabase(databaseName)
            }
        } catch {
            await scratch.remove()
            throw error
        }
        return scratch
    }

    /// A cluster in `directory` that something else (a server's embedded PostgreSQL) created.
    public init(directory: URL) {
        self.init(cluster: LocalCluster(directory: directory, logger: Self.quietLogger))
    }

    private init(cluster: LocalCluster) {
        self.cluster = cluster
    }

    /// LocalCluster logs every start and stop at info; a test's output has no use for them.
    private static let quietLogger: Logger = {
        var logger = Logger(label: "ScratchCluster")
        logger.logLevel = .warning
        return logger
    }()

    public var databaseURL: String { cluster.url(database: Self.databaseName) }

    /// Starts the cluster again on its data (`pg_ctl start -w`: after a crash, once recovery is done).
    public func startAgain() async throws {
        try await runOffCooperativePool { _ = try cluster.start() }
    }

    /// Stops it the way an operator would: `pg_ctl stop -m fast` (sessions are disconnected).
    public func stop() async throws {
        try await runOffCooperativePool { try cluster.stop() }
    }

    /// Crashes it: SIGQUIT to the postmaster, PostgreSQL's immediate shutdown, which ends every process at
    /// once without a checkpoint, so the next start runs crash recovery from the WAL. Returns once the
    /// postmaster is gone.
    public func crash() async throws {
        guard let postmaster = postmasterPID() else { throw ScratchClusterError.notRunning(cluster.directory.path) }
        kill(postmaster, SIGQUIT)
        try await waitUntil("the postmaster \(postmaster) exits after SIGQUIT", timeout: .seconds(30)) {
            !isProcessAlive(postmaster)
        }
    }

    /// The postmaster's pid; nil when the cluster is not running (`LocalCluster.postmasterPID`: a stale pid
    /// file whose pid now names another process does not count).
    public func postmasterPID() -> pid_t? {
        cluster.postmasterPID().flatMap { isProcessAlive($0) ? $0 : nil }
    }

    /// Whether `pg_ctl status` finds it running.
    public func isRunning() async throws -> Bool {
        try await runOffCooperativePool { try cluster.isRunning() }
    }

    /// Stops the cluster if it runs and deletes its folder; errors are ignored, this is cleanup.
    public func remove() async {
        _ = try? await runOffCooperativePool { [cluster] in
            try? cluster.stop()
            try? FileManager.default.removeItem(at: cluster.directory)
        }
    }
}

public enum ScratchClusterError: Error, CustomStringConvertible {
    case notRunning(String)

    public var description: String {
        switch self {
        case .notRunning(let folder): "no PostgreSQL runs on the cluster in \(folder)"
        }
    }
}
