import Foundation
import LocalPostgres
import Logging
import Migrations
import Postgres

/// Throwaway PostgreSQL databases for tests, each a copy of one migrated template.
///
/// The first call starts one private cluster for the whole test process in a short folder under /tmp
/// (or uses the server in `DATABASE_URL` when set), creates a template database and applies
/// the embedded migrations to it once. Every `fresh()` then copies the template with
/// `CREATE DATABASE … TEMPLATE`, so suites run in parallel without seeing each other's rows.
/// The cluster is stopped and its folder removed when the process exits.
public enum TestDatabase {
    /// The URL of a new database, migrated like the project's, with a unique name and no rows.
    public static func fresh() async throws -> String {
        let environment = try await setUp.value
        return try await createDatabase(copying: environment.templateName, in: environment)
    }

    /// The URL of a new database with no migrations applied, for tests of schemas and migrations themselves.
    public static func empty() async throws -> String {
        try await createDatabase(copying: "template0", in: setUp.value)
    }

    /// The URL of the server's `postgres` database, for tests that manage databases themselves.
    public static func serverURL() async throws -> String {
        try await setUp.value.serverURL
    }

    /// The most connections `ConnectionBudget` shares out, whatever the cluster allows. The cap is about the
    /// machine, not PostgreSQL: every fixture brings threads (event loops, pool workers) and a server process
    /// brings a process, and on two cores a hundred of them at once only contend for the cores until the
    /// tests' bounded waits run out. About twenty apps at a time keep both cores busy.
    static let maxFixtureConnections = 400

    /// The connections `ConnectionBudget` shares out among fixtures: the server's `max_connections`, less those
    /// already open on it (someone else's, on a `DATABASE_URL` server), less a quarter of the rest, kept for what
    /// no fixture holds (a test's own connections, the Postgres tests' pools, creating databases); at most
    /// `maxFixtureConnections`.
    public static func fixtureConnections() async throws -> Int {
        let environment = try await setUp.value
        return try await runOffCooperativePool {
            let connection = try Connection.connect(to: environment.serverURL)
            defer { connection.close() }
            let row = try connection.query(
                """
                SELECT current_setting('max_connections')::int, \
                (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int
                """)[0]
            let free = try row.decode(Int.self, at: 0) - row.decode(Int.self, at: 1)
            return min(maxFixtureConnections, max(20, free * 3 / 4))
        }
    }

    /// Whether `url` names a database `fresh()` or `empty()` made: one on the cluster the whole suite shares.
    public static func isShared(_ url: String) -> Bool {
        cleanup.isCreatedDatabase(in: url)
    }

    /// The project's migrations: the list built into budget-server (migrations/*.sql at build time).
    public static func migrations() throws -> [Migration] {
        try EmbeddedMigrations.all()
    }

    private static func createDatabase(copying template: String, in environment: Environment) async throws -> String {
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // A few at a time (DatabaseCreationGate): hundreds at once starved the tests already running.
        try await DatabaseCreationGate.shared.run {
            try await runOffCooperativePool {
                let connection = try Connection.connect(to: environment.serverURL)
                try connection.execute(Query(unsafeSQL: "CREATE DATABASE \(name) TEMPLATE \(template)"))
            }
        }
        cleanup.createdDatabase(name)
        return url(environment.serverURL, database: name)
    }

    private struct Environment: Sendable {
        let serverURL: String
        let templateName: String
    }

    /// Started once, on first use, however many tests ask at the same time.
    private static let setUp = Task<Environment, any Error> {
        try await runOffCooperativePool(makeEnvironment)
    }

    private static let cleanup = Cleanup()

    private static func makeEnvironment() throws -> Environment {
        let logger = Logger(label: "TestDatabase")
        let serverURL: String
        if let external = ProcessInfo.processInfo.environment["DATABASE_URL"], !external.isEmpty {
            serverURL = external
        } else {
            // A short folder keeps the socket path far below the 107-byte limit.
            var template = Array("/tmp/bs-XXXXXX".utf8CString)
            guard let folder = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
            let cluster = LocalCluster(
                directory: URL(fileURLWithPath: String(cString: folder)), logger: logger,
                // Durability is pointless for throwaway data and costs seconds per suite. Every test starts at
                // once, and the fixtures that hold connections share max_connections through ConnectionBudget,
                // which keeps a quarter of it for connections no fixture holds.
                settings: ["fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "max_connections": "2000"])
            cleanup.register(cluster)
            serverURL = try cluster.start()
        }
        cleanup.serverURL = serverURL
        atexit { TestDatabase.cleanup.run() }
        let templateName = "test_template_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
        try Connection.connect(to: serverURL).execute(Query(unsafeSQL: "CREATE DATABASE \(templateName)"))
        cleanup.createdDatabase(templateName)
        let connection = try Connection.connect(to: url(serverURL, database: templateName))
        defer { connection.close() }
        try Migrator(migrations: try migrations(), logger: logger).migrate(on: connection)
        return Environment(serverURL: serverURL, templateName: templateName)
    }

    /// `base` pointed at `database`: the URL's path replaced, or `dbname=` appended to a conninfo string.
    static func url(_ base: String, database: String) -> String {
        guard base.contains("://"), var components = URLComponents(string: base) else {
            return base + " dbname=\(database)"
        }
        components.path = "/" + database
        return components.string ?? base
    }
}

/// What to undo at process exit: the private cluster, or the databases made on a `DATABASE_URL` server.
// @unchecked Sendable: every stored property is guarded by `lock`.
private final class Cleanup: @unchecked Sendable {
    private let lock = NSLock()
    private var cluster: LocalCluster?
    private var databases: [String] = []
    private var _serverURL: String?

    var serverURL: String? {
        get { lock.withLock { _serverURL } }
        set { lock.withLock { _serverURL = newValue } }
    }

    func register(_ cluster: LocalCluster) {
        lock.withLock { self.cluster = cluster }
    }

    func createdDatabase(_ name: String) {
        lock.withLock { databases.append(name) }
    }

    /// Whether `url` names one of the databases made here.
    func isCreatedDatabase(in url: String) -> Bool {
        lock.withLock { databases.contains { url.contains("/\($0)?") || url.hasSuffix("/\($0)") || url.contains("dbname=\($0)") } }
    }

    func run() {
        let (cluster, databases, serverURL) = lock.withLock { (self.cluster, self.databases, _serverURL) }
        if let cluster {
            try? cluster.stop()
            Self.removeTree(cluster.directory.path)
        } else if let serverURL, let connection = try? Connection.connect(to: serverURL) {
            // A shared server keeps nothing of ours; FORCE ends sessions a test left open.
            for name in databases {
                try? connection.execute(Query(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
            }
        }
    }

    /// Deletes a folder with `rm -rf`: the cluster holds a few hundred files for each of the hundreds of
    /// databases the suite made, and FileManager, removing them one call at a time, kept the finished test
    /// process alive for over a minute at the end of a loaded run; rm takes seconds.
    private static func removeTree(_ path: String) {
        var child = pid_t()
        let words: [String] = ["/bin/rm", "-rf", "--", path]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        guard posix_spawn(&child, "/bin/rm", nil, nil, arguments, environ) == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            return
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) == -1 && errno == EINTR {}
    }
}
