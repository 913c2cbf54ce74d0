import ArgumentParser
import BudgetAPI
import CLinux
import Foundation
import HTTPServer
import LogHandlers
import Logging
import LocalPostgres
import Postgres
import Sockets

/// `budget-server serve`: migrate, then answer HTTP until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the API (the default command).")

    @Option(help: "Address to listen on (env HOST, default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on (env PORT, default 3000).")
    var port: Int?

    @Option(help: "PostgreSQL connections in the pool (env POOL_SIZE, default 8).")
    var poolSize: Int?

    @Option(
        help:
            "PostgreSQL connections each event loop drives itself, for single statements outside a transaction (env LOOP_CONNECTIONS, default 4; 0 sends every statement through the pool)."
    )
    var loopConnections: Int?

    @Option(help: "Seconds a request waits for a free PostgreSQL connection before it answers 503 (env POOL_TIMEOUT, default 5).")
    var poolTimeout: Int?

    @Option(
        help:
            "PostgreSQL connections large answers (lists, /db) are read from while they are sent, each opened when first needed (env STREAM_POOL_SIZE, default 8)."
    )
    var streamPoolSize: Int?

    @Option(help: "The most records any list answers, with a Link header to the rest (env MAX_ROWS; default: no limit, as json-server).")
    var maxRows: Int?

    @Flag(help: "Refuse every write with 403, like json-server --read-only.")
    var readOnly = false

    @Option(help: "Require Authorization: Bearer <token> on every route but /health and /ready (env BUDGET_API_TOKEN).")
    var apiToken: String?

    @Option(
        help: "Who may create users: open (anyone, with POST /auth/users) or closed (only budget-server user add; env BUDGET_SIGNUP, default closed)."
    )
    var signup: String?

    @Option(help: "Log format: text or json, one JSON object per line (env LOG_FORMAT, default text).")
    var logFormat: LogFormat?

    @Option(name: .customLong("cors-origin"), help: "An origin browsers may call from (repeatable; default: every origin).")
    var corsOrigins: [String] = []

    @Option(help: "Delay every answer by this many milliseconds, like a slow network (at most 10000).")
    var delay: Int = 0

    @Option(help: "A json-server db.json to load when the database is empty; a database with data is left alone.")
    var seed: String?

    @Flag(help: "Allow PUT /db to replace the whole database (for client test suites).")
    var allowReset = false

    @Flag(name: .customLong("no-home"), help: "Answer 404 at / instead of the home page that lists the resources.")
    var withoutHomePage = false

    @Option(help: "Days the change feed keeps deletions; an older since answers 410 (default 30).")
    var tombstoneRetention: Int = 30

    @Option(help: "The most operations one POST /batch may hold; more answer 413 (default 100).")
    var batchLimit: Int = 100

    @Flag(help: "Take the client's scheme, host and address from Forwarded / X-Forwarded-* (only behind a proxy that sets them).")
    var trustProxy = false

    @OptionGroup var clock: TimeZoneOptions

    @OptionGroup var database: DatabaseOptions

    /// Stops glibc from handing freed heap memory back to the kernel the moment the top of an arena has
    /// 128 KiB free, its default. A request's allocations come and go in about that amount, so each one
    /// paid for page faults to get the pages back (about a third of /health's CPU in `perf`); keeping up
    /// to 4 MiB per arena costs nothing in peak RSS, which the trim never lowered anyway.
    private func keepFreedHeapMemory() {
        _ = clinux_set_malloc_trim_threshold(4 << 20)
    }

    /// How long in-flight requests may take to finish after a stop signal (docs/operations.md, Shutdown).
    static let gracePeriod: Duration = .seconds(10)

    func run() async throws {
        try await OperatorError.explaining { try await serve() }
    }

    private func serve() async throws {
        let clock = ContinuousClock()
        let startedAt = clock.now
        keepFreedHeapMemory()
        let logger = makeLogger(level: try database.resolvedLogLevel(), format: try LogFormat.resolve(logFormat))
        var configuration = ServerConfiguration()
        configuration.limits.maxBodyBytesByPath = BudgetApp.maxBodyBytesByPath
        configuration.host = try Setting.resolve(host, environment: "HOST", default: configuration.host)
        configuration.port = try Setting.resolve(port, environment: "PORT", default: configuration.port)
        let poolSize = try Setting.resolve(poolSize, environment: "POOL_SIZE", default: 8)
        guard (1...1000).contains(poolSize) else { throw ValidationError("--pool-size must be between 1 and 1000") }
        let poolTimeout = try Setting.resolve(poolTimeout, environment: "POOL_TIMEOUT", default: 5)
        guard (1...300).contains(poolTimeout) else { throw ValidationError("--pool-timeout must be between 1 and 300 seconds") }
        let streamPoolSize = try Setting.resolve(streamPoolSize, environment: "STREAM_POOL_SIZE", default: 8)
        guard (1...1000).contains(streamPoolSize) else { throw ValidationError("--stream-pool-size must be between 1 and 1000") }

        var options = try makeOptions()
        let seedBytes = try seed.map(Seed.read)

        // From here a stop signal is kept for later, not fatal: the embedded cluster must be stopped too.
        TerminationSignal.startCatching()
        let location = try DatabaseLocation.resolve(database, logger: logger)
        defer { location.close(logger: logger) }
        TerminationSignal.beforeImmediateExit { signal in
            let status = TerminationSignal.immediateExitStatus(for: signal)
            logger.warning("signal \(signal) received again; exiting at once with status \(status), cutting requests in flight")
            LogSink.standardError.flush()  // _exit skips the flush at exit
            // Sent once the process is gone: the fast shutdown ends the backends at once, and a request whose
            // statement failed before the exit would be answered (a 503) instead of cut.
            location.cluster?.requestFastShutdownAfterExit()
        }
        let migrator = try database.makeMigrator(logger: logger)
        options.clock = try prepareDatabase(url: location.url, migrator: migrator, seed: seedBytes, logger: logger)

        let poolConfiguration = PoolConfiguration(url: location.url, size: poolSize, checkoutTimeout: .seconds(poolTimeout))
        let pool = ConnectionPool(configuration: poolConfiguration, logger: logger)
        let streamPool = ConnectionPool(
            configuration: BudgetApp.streamPoolConfiguration(for: poolConfiguration, size: streamPoolSize), logger: logger)
        let service = BudgetApp.makeService(pool: pool, streamPool: streamPool, migrator: migrator, options: options, logger: logger)
        let server = Server(configuration: configuration, logger: logger, handlerForLoop: service.handlerForLoop)
        let boundPort = try server.start()
        logger.info(
            "listening on http://\(configuration.host):\(boundPort)",
            metadata: [
                // Plain arithmetic: Duration.formatted loads ICU, which kept about 5 MiB resident for the life
                // of the process for this one line (bench/README.md).
                "startup": "\((clock.now - startedAt).wholeMilliseconds) ms"
            ])
        if options.apiToken != nil {
            // Whether a token is required, never the token itself.
            logger.info("every route but \(BudgetApp.openPaths.sorted().joined(separator: " and ")) requires a bearer token")
        }

        let signal = await TerminationSignal.wait()
        logger.info("signal \(signal) received; finishing requests in flight (at most \(Self.gracePeriod))")
        service.beginShutdown()
        await server.shutdown(gracePeriod: Self.gracePeriod)
        service.finishShutdown()
        await streamPool.shutdown()
        await pool.shutdown()
        logger.info("stopped")
    }

    /// The API's switches from the command line, checked.
    private func makeOptions() throws -> BudgetApp.Options {
        guard (0...10_000).contains(delay) else { throw ValidationError("--delay must be between 0 and 10000 ms") }
        guard tombstoneRetention >= 1 else { throw ValidationError("--tombstone-retention must be at least 1 day") }
        guard (1...10_000).contains(batchLimit) else { throw ValidationError("--batch-limit must be between 1 and 10000") }
        var options = BudgetApp.Options()
        options.isReadOnly = readOnly
        switch try Setting.resolve(signup, environment: "BUDGET_SIGNUP") ?? "closed" {
        case "open": options.signupIsOpen = true
        case "closed": options.signupIsOpen = false
        default: throw ValidationError("--signup (or BUDGET_SIGNUP) must be open or closed")
        }
        options.allowsReset = allowReset
        options.servesHomePage = !withoutHomePage
        options.corsOrigins = corsOrigins.isEmpty ? nil : Set(corsOrigins)
        options.delay = .milliseconds(delay)
        options.tombstoneRetention = .seconds(tombstoneRetention * 24 * 3600)
        options.batchLimit = batchLimit
        options.trustsProxy = trustProxy
        options.maxRows = try Setting.resolve(maxRows, environment: "MAX_ROWS")
        if let maxRows = options.maxRows, maxRows < 1 { throw ValidationError("--max-rows must be at least 1") }
        options.connectionsPerLoop = try Setting.resolve(loopConnections, environment: "LOOP_CONNECTIONS", default: options.connectionsPerLoop)
        guard (0...100).contains(options.connectionsPerLoop) else { throw ValidationError("--loop-connections must be between 0 and 100") }
        options.apiToken = try Self.checkedToken(try Setting.resolve(apiToken, environment: "BUDGET_API_TOKEN"))
        return options
    }

    /// The token, if it is one a client can send: RFC 6750 §2.1's b64token, `[A-Za-z0-9-._~+/]+` then any
    /// `=`. The error never repeats the value: it is a secret.
    static func checkedToken(_ token: String?) throws -> String? {
        guard let token else { return nil }
        let isTokenCharacter: (UInt8) -> Bool = { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "-._~+/".utf8.contains(byte)
            }
        }
        let body = token.utf8.prefix { $0 != UInt8(ascii: "=") }
        let padding = token.utf8.dropFirst(body.count)
        guard !body.isEmpty, body.allSatisfy(isTokenCharacter), padding.allSatisfy({ $0 == UInt8(ascii: "=") }) else {
            throw ValidationError(
                "--api-token (or BUDGET_API_TOKEN) must be letters, digits and - . _ ~ + / followed by any = (RFC 6750 b64token)"
            )
        }
        return token
    }

    /// Applies pending migrations (the migrator logs each), checks `--time-zone`, loads `--seed` into an
    /// empty database, and stamps what waits for the change feed, so the first answers carry a caught-up
    /// `X-Sync-Seq`; answers the clock of the checked zone.
    private func prepareDatabase(url: String, migrator: Migrator, seed: [UInt8]?, logger: Logger) throws -> CivilClock {
        let connection = try Connection.connect(to: url)
        defer { connection.close() }
        try migrator.migrate(on: connection)
        let civilClock = try clock.makeClock(checkingOn: connection)
        if let seed, let path = self.seed {
            // Ledger 1: the one ledger of a server without users.
            if try Seeder.isDatabaseEmpty(connection, ledger: .first) {
                let summary = try Seeder.load(seed, into: connection, ledger: .first, clock: civilClock)
                logger.info("seeded from \(path): \(summary)")
            } else {
                logger.notice("the database already holds data; --seed \(path) was not loaded")
            }
        }
        try ChangeFeedCatchUp.stampPending(on: connection)
        return civilClock
    }
}
