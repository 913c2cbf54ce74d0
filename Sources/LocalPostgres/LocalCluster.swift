import CLinux
import Foundation
import Logging

/// A private PostgreSQL cluster in one folder, run with the machine's own `initdb` and `pg_ctl`.
///
/// The folder holds the data directory (`data/`), the server log (`postgres.log`) and the Unix socket;
/// the server listens on nothing else (`listen_addresses=''`), and local socket connections are trusted.
/// Starting an existing cluster reuses its data; a stale `postmaster.pid` after a crash is left to
/// `pg_ctl`, which recognises it. Databases are created with the `createdb` program next to `pg_ctl`,
/// so this module never links libpq.
public struct LocalCluster: Sendable {
    /// The cluster folder, absolute.
    public let directory: URL
    private let logger: Logger
    private let searchPath: [String]?
    private let settings: [String: String]
    private let runner = CommandRunner()

    /// The kernel's `sun_path` holds 108 bytes including the terminating NUL.
    static let socketPathLimit = 107
    /// With Unix sockets only, the port just names the socket file (`.s.PGSQL.5432`).
    static let port = 5432

    /// Describes a cluster in `directory` (created on `start()` if needed).
    ///
    /// - Parameters:
    ///   - searchPath: folders to look for `initdb`/`pg_ctl` in; nil means `PATH`, then
    ///     `/usr/lib/postgresql/*/bin` (highest version first).
    ///   - settings: extra `postgresql.conf` settings applied at every start, e.g. `["fsync": "off"]` for tests.
    public init(directory: URL, logger: Logger, searchPath: [String]? = nil, settings: [String: String] = [:]) {
        self.directory = directory.standardizedFileURL
        self.logger = logger
        self.searchPath = searchPath
        self.settings = settings
    }

    /// The folder the server puts its Unix socket in.
    public var socketDirectory: String { directory.path }
    /// PGDATA.
    public var dataDirectory: String { directory.appendingPathComponent("data").path }
    /// The server's log file.
    public var logFile: String { directory.appendingPathComponent("postgres.log").path }

    /// A libpq URL for `database` on this cluster, as the `postgres` superuser over the Unix socket.
    public func url(database: String = "postgres") -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~/"))
        let host = socketDirectory.addingPercentEncoding(withAllowedCharacters: allowed) ?? socketDirectory
        let name = database.addingPercentEncoding(withAllowedCharacters: allowed) ?? database
        return "postgresql:///\(name)?host=\(host)&user=postgres"
    }

    /// Creates the cluster if it does not exist, starts it unless it is running, and returns `url()`.
    public func start() throws -> String {
        let programs = try PostgresPrograms.find(in: searchPath ?? PostgresPrograms.defaultSearchPath())
        let socketPath = "\(socketDirectory)/.s.PGSQL.\(Self.port)"
        guard socketPath.utf8.count <= Self.socketPathLimit else {
            throw LocalClusterError.socketPathTooLong(path: socketPath, limit: Self.socketPathLimit)
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try runner.giveToPostgresUser(directory.path)
        if runner.runsAsPostgresUser, try runner.run("/usr/bin/test", ["-w", directory.path, "-a", "-x", directory.path]).status != 0 {
            let blocked = try ClusterPlacement.firstFolderPostgresCannotEnter(above: directory.path, runner: runner)
            throw LocalClusterError.directoryNotAccessible(path: directory.path, blockedFolder: blocked)
        }
        if !FileManager.default.fileExists(atPath: "\(dataDirectory)/PG_VERSION") {
            try initialize(programs)
        }
        try writeSettings()
        removeStalePidFile()
        if try isRunning(programs) {
            logger.info("PostgreSQL cluster already running", metadata: ["directory": "\(directory.path)"])
            return url()
        }
        logger.info("starting PostgreSQL cluster", metadata: ["directory": "\(directory.path)"])
        do {
            try runner.runChecked(
                try programs.program("pg_ctl"),
                ["start", "-D", dataDirectory, "-l", logFile, "-w", "-t", "60", "-s"])
        } catch LocalClusterError.commandFailed(let command, let status, let output) {
            // pg_ctl says little; the reason (bad setting, port in use, permissions) is in the server log.
            let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
            let tail = log.split(separator: "\n").suffix(10).joined(separator: "\n")
            throw LocalClusterError.commandFailed(command: command, status: status, output: output + "\n" + tail)
        }
        return url()
    }

    /// Stops the server with `pg_ctl stop -m fast` (open sessions are disconnected); nothing if it is not running.
    public func stop() throws {
        let programs = try PostgresPrograms.find(in: searchPath ?? PostgresPrograms.defaultSearchPath())
        // pg_ctl signals whatever process the pid file names: after a crash, perhaps not a postmaster of ours.
        guard try isRunning(programs) else { return removeStalePidFile() }
        logger.info("stopping PostgreSQL cluster", metadata: ["directory": "\(directory.path)"])
        try runner.runChecked(try programs.program("pg_ctl"), ["stop", "-D", dataDirectory, "-m", "fast", "-w", "-s"])
    }

    /// Asks the cluster's postmaster for a fast shutdown (SIGINT, what `pg_ctl stop -m fast` sends) once this
    /// process has exited, so a process about to `_exit` leaves no PostgreSQL running behind it; PostgreSQL
    /// disconnects its sessions, writes a checkpoint and exits on its own. Nothing if it is not running.
    ///
    /// Not before the exit: the fast shutdown ends every session at once, and this process, still running,
    /// would read that as a lost connection and could answer a request it was about to cut. A child forked
    /// here sends the signal once none of this process's threads runs; if none can be forked, it goes now.
    public func requestFastShutdownAfterExit() {
        guard let postmaster = postmasterPID() else { return }
        if clinux_signal_after_exit(postmaster, SIGINT) != 0 { kill(postmaster, SIGINT) }
    }

    /// The pid in `postmaster.pid` when that process is this cluster's postmaster; nil when none runs, or
    /// when the file was left behind by one that crashed and its pid now names another process.
    ///
    /// A busy machine reuses a dead process's pid soon, and signalling the pid a stale file names (what
    /// `pg_ctl stop` does) would stop a stranger: another cluster's postmaster, say, which then shuts down
    /// under everyone using it. The postmaster runs in its data directory, so on Linux a process whose
    /// working directory (`/proc/PID/cwd`) is elsewhere is not ours; where that cannot be read, a live
    /// process is taken to be ours.
    public func postmasterPID() -> pid_t? {
        guard let text = try? String(contentsOfFile: "\(dataDirectory)/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = pid_t(line), postmaster > 0,
            kill(postmaster, 0) == 0 || errno == EPERM
        else { return nil }
        // A zombie is a dead postmaster whose parent has not reaped it yet (state Z in /proc/PID/stat).
        if let stat = try? String(contentsOfFile: "/proc/\(postmaster)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"), stat[close...].dropFirst(2).first == "Z"
        {
            return nil
        }
        guard let workingDirectory = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(postmaster)/cwd") else {
            return postmaster
        }
        let ours = URL(fileURLWithPath: dataDirectory).resolvingSymlinksInPath().path
        return URL(fileURLWithPath: workingDirectory).resolvingSymlinksInPath().path == ours ? postmaster : nil
    }

    /// Deletes `postmaster.pid` when it names no postmaster of this cluster: a crash left it, and a new
    /// postmaster would refuse to start while its pid names a live process, or `pg_ctl` would signal that process.
    private func removeStalePidFile() {
        let path = "\(dataDirectory)/postmaster.pid"
        guard FileManager.default.fileExists(atPath: path), postmasterPID() == nil else { return }
        logger.notice("removing a stale postmaster.pid (no postmaster of this cluster runs)", metadata: ["directory": "\(directory.path)"])
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Creates database `name`, copied from `template` when given, with the `createdb` program.
    public func createDatabase(_ name: String, template: String? = nil) throws {
        let programs = try PostgresPrograms.find(in: searchPath ?? PostgresPrograms.defaultSearchPath())
        // createdb quotes the names itself, so any name is safe here.
        var arguments = ["-h", socketDirectory, "-p", String(Self.port), "-U", "postgres"]
        if let template { arguments += ["-T", template] }
        try runner.runChecked(try programs.program("createdb"), arguments + ["--", name])
    }

    private func initialize(_ programs: PostgresPrograms) throws {
        logger.info("creating PostgreSQL cluster", metadata: ["directory": "\(directory.path)"])
        // Trust applies to the Unix socket only, which lives in a folder owned by the server's user;
        // TCP is refused outright (and not listened on either).
        try runner.runChecked(
            try programs.program("initdb"),
            [
                "-D", dataDirectory, "--username=postgres", "--auth-local=trust", "--auth-host=reject",
                "--encoding=UTF8", "--locale=C",
            ])
        let mainConfig = "\(dataDirectory)/postgresql.conf"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: mainConfig))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\ninclude_if_exists = '\(Self.settingsFileName)'\n".utf8))
    }

    private static let settingsFileName = "budget_local.conf"

    /// Rewrites the settings file at every start, so a moved folder still gets the right socket directory.
    private func writeSettings() throws {
        var lines = [
            "listen_addresses = ''", "unix_socket_directories = \(Self.quoted(socketDirectory))",
            "port = \(Self.port)",
        ]
        lines += settings.sorted(by: { $0.key < $1.key }).map { "\($0.key) = \(Self.quoted($0.value))" }
        let path = "\(dataDirectory)/\(Self.settingsFileName)"
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        try runner.giveToPostgresUser(path)
    }

    /// A `postgresql.conf` string literal.
    private static func quoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// Whether a server is running on this cluster's data, started by this process or another.
    public func isRunning() throws -> Bool {
        guard FileManager.default.fileExists(atPath: "\(dataDirectory)/PG_VERSION") else { return false }
        return try isRunning(try PostgresPrograms.find(in: searchPath ?? PostgresPrograms.defaultSearchPath()))
    }

    private func isRunning(_ programs: PostgresPrograms) throws -> Bool {
        // pg_ctl status: 0 running, 3 not running, 4 no usable data directory. It trusts the pid file, so a
        // stale one whose pid was reused counts as running; postmasterPID() looks closer.
        guard postmasterPID() != nil else { return false }
        return try runner.run(try programs.program("pg_ctl"), ["status", "-D", dataDirectory]).status == 0
    }
}
