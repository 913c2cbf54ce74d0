import BudgetAPI
import Foundation
import HTTPServer
import Logging
import Postgres
import TestSupport

/// The whole budget API on a fresh database, served over a real socket on an ephemeral port: what the API
/// tests and the BudgetSync tests talk to.
public final class TestApp: Sendable {
    public let server: Server
    public let service: BudgetApp.Service
    public let pool: ConnectionPool
    /// Where large answers are read from while they are sent (`BudgetApp.makeService`).
    public let streamPool: ConnectionPool
    public let port: Int
    public let databaseURL: String
    /// The connections this app may open, taken from the suite's budget until `stop()`.
    private let lease: ConnectionLease

    /// Where a client reaches the server, e.g. `http://127.0.0.1:40321`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Four connections, and a checkout timeout far above any stall a loaded 2-core machine has shown, so a
    /// busy moment cannot turn into a 503 the test did not ask for.
    public static func defaultPool(_ url: String) -> PoolConfiguration {
        PoolConfiguration(url: url, size: 4, checkoutTimeout: .seconds(30))
    }

    /// Two connections for large answers, opened when a test first needs them.
    public static let streamPoolSize = 2

    public static let logger: Logger = {
        var logger = Logger(label: "budget-api-tests")
        logger.logLevel = .critical
        return logger
    }()

    public init(
        databaseURL: String? = nil,
        options: BudgetApp.Options = BudgetApp.Options(),
        poolConfiguration: (String) -> PoolConfiguration = TestApp.defaultPool
    ) async throws {
        let url: String
        if let databaseURL { url = databaseURL } else { url = try await TestDatabase.fresh() }
        self.databaseURL = url
        let configuration = poolConfiguration(url)
        // The most this app opens: its pools, each loop's own connections, the long-poll and auth listeners, the
        // sequencer, and one for a test's `scalar` or `seed` beside them.
        lease = try await ConnectionBudget.shared().lease(
            configuration.size + ServerConfiguration.defaultEventLoopCount * options.connectionsPerLoop + Self.streamPoolSize + 4,
            for: "a TestApp")
        pool = ConnectionPool(configuration: configuration, logger: Self.logger)
        streamPool = ConnectionPool(
            configuration: BudgetApp.streamPoolConfiguration(for: configuration, size: Self.streamPoolSize), logger: Self.logger)
        let migrator = Migrator(migrations: try TestDatabase.migrations(), logger: Self.logger)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.port = 0
        serverConfiguration.limits.requestTimeout = .seconds(2)
        serverConfiguration.limits.maxBodyBytesByPath = BudgetApp.maxBodyBytesByPath
        service = BudgetApp.makeService(pool: pool, streamPool: streamPool, migrator: migrator, options: options, logger: Self.logger)
        server = Server(configuration: serverConfiguration, logger: Self.logger, handlerForLoop: service.handlerForLoop)
        port = try server.start()
    }

    public func stop() async {
        service.beginShutdown()
        await server.shutdown(gracePeriod: .seconds(1))
        await streamPool.shutdown()
        await pool.shutdown()
        lease.release()
    }

    /// One request on a new connection.
    ///
    /// The client blocks, so it runs on a thread of its own: on the cooperative pool it could starve the
    /// server's handler tasks (two threads on a 2-core machine).
    public func request(
        _ method: String,
        _ path: String,
        json body: String? = nil,
        headers: [(String, String)] = [],
        timeout: Duration = .seconds(30)
    ) async throws -> TestResponse {
        try await runOffCooperativePool { [port] in
            try TestClient(port: port, timeout: timeout).request(method, path, json: body, headers: headers)
        }
    }

    /// Runs one SQL query on the test database and answers the first column of the first row.
    public func scalar(_ sql: String) async throws -> String? {
        try await runOffCooperativePool { [databaseURL] in
            let connection = try Connection.connect(to: databaseURL)
            defer { connection.close() }
            let result = try connection.query(Query(unsafeSQL: sql))
            return result.count > 0 ? result[0].column(0) : nil
        }
    }

    /// Runs `body` against a fresh app and stops it afterwards, also when the body throws.
    public static func with(
        databaseURL: String? = nil,
        options: BudgetApp.Options = BudgetApp.Options(),
        poolConfiguration: (String) -> PoolConfiguration = TestApp.defaultPool,
        _ body: (TestApp) async throws -> Void
    ) async throws {
        let app = try await TestApp(databaseURL: databaseURL, options: options, poolConfiguration: poolConfiguration)
        do {
            try await body(app)
        } catch {
            await app.stop()
            throw error
        }
        await app.stop()
    }
}

extension TestApp {
    /// Loads a db.json into this app's database through the Seeder, off the cooperative pool.
    @discardableResult
    public func seed(_ json: String, replacing: Bool = false, ledger: LedgerID = .first) async throws -> SeedSummary {
        try await Self.seed(json, into: databaseURL, replacing: replacing, ledger: ledger)
    }

    /// Loads a db.json into a ledger (ledger 1 by default, the one the unscoped API serves) of the database at
    /// `databaseURL` (one a child server process serves, say).
    @discardableResult
    public static func seed(
        _ json: String, into databaseURL: String, replacing: Bool = false, ledger: LedgerID = .first
    ) async throws -> SeedSummary {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: databaseURL)
            defer { connection.close() }
            return try Seeder.load(Array(json.utf8), into: connection, ledger: ledger, replacing: replacing)
        }
    }
}

extension TestResponse {
    /// The body as a JSON object (decoded by Foundation, which is fine on the test side).
    public var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    public var array: [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [[String: Any]] ?? []
    }

    /// The `field` names of a problem's `errors`.
    public var problemFields: [String] {
        (object["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String }
    }
}
