import HTTPServer
import Logging
import Postgres
import Prometheus

/// The budget API as one HTTP handler: every route and middleware is listed here, in one place.
public enum BudgetApp {
    /// How this server instance behaves beyond its routes (SPEC §1 and §3's mock-remote helpers).
    public struct Options: Sendable {
        /// `--read-only`: every write answers 403.
        public var isReadOnly = false
        /// `--allow-reset`: `PUT /db` may replace everything, for client test suites.
        public var allowsReset = false
        /// `--cors-origin`: the origins browsers may call from; nil allows every origin.
        public var corsOrigins: Set<String>?
        /// `--delay`: how long every answer waits, like a slow network.
        public var delay: Duration = .zero
        /// `--tombstone-retention`: how long `/changes` keeps deletions (SPEC §5: 30 days by default).
        public var tombstoneRetention: Duration = .seconds(30 * 24 * 3600)
        /// `--batch-limit`: the most operations one `POST /batch` may hold (413 beyond).
        public var batchLimit = BatchMiddleware.defaultMaximumOperations
        /// `--api-token`: when set, every route but the health checks needs `Authorization: Bearer <token>`
        /// (SPEC §6). A secret: never log it.
        public var apiToken: String?
        /// Where request, pool and long-poll metrics go; `GET /metrics` renders it. Each `Options()` has a
        /// registry of its own, so servers in one process (tests) do not count into one another's.
        public var metricsRegistry = PrometheusCollectorRegistry()
        /// `--loop-connections`: PostgreSQL connections each event loop drives itself for single statements
        /// outside a transaction (the reads and plain writes); 0 sends everything through the pool.
        public var connectionsPerLoop = 4

        public init() {}
    }

    /// Routes that answer without a token, so that orchestrators can probe the server (SPEC §6).
    public static let openPaths: Set<String> = ["/health", "/ready"]

    /// Headers a browser app may read from our answers (SPEC §6).
    static let exposedHeaders = ["X-Total-Count", "Link", "Location", "ETag", "X-Sync-Seq", "Idempotent-Replayed", "Retry-After"]

    /// Builds the handler the HTTP server runs; `migrator` lets `/ready` see unapplied migrations.
    public static func makeHandler(
        pool: ConnectionPool,
        migrator: Migrator,
        options: Options = Options(),
        logger: Logger
    ) -> any Handler {
        makeService(pool: pool, migrator: migrator, options: options, logger: logger).handler
    }

    /// The handler, and what must happen when the server stops (see `Service.beginShutdown`).
    public static func makeService(
        pool: ConnectionPool,
        migrator: Migrator,
        options: Options = Options(),
        logger: Logger
    ) -> Service {
        let database = Database(pool: pool)
        let sync = SyncRoutes(database: database, tombstoneRetention: options.tombstoneRetention, logger: logger)
        let metrics = MetricsRoutes.makeFactory(registry: options.metricsRegistry)
        var router = Router()
        HealthRoutes(database: database, migrator: migrator).register(in: &router)
        MetricsRoutes(registry: options.metricsRegistry, factory: metrics, pool: pool, notifications: sync.notifications)
            .register(in: &router)
        sync.register(in: &router)
        RecordRoutes<Categories>(database: database).register(in: &router)
        CategoryTransactionRoutes(database: database).register(in: &router)
        RecordRoutes<Transactions>(database: database).register(in: &router)
        CollectionRoutes(database: database, allowReset: options.allowsReset).register(in: &router)
        let idempotency = Idempotency(database: database)
        // Keys and preconditions apply to requests a route takes; the router answers the others 404 or 405.
        let routes = router
        let isRouted: @Sendable (Request) -> Bool = { request in
            request.path == BatchMiddleware.path ? request.method == .post : routes.accepts(request.method, on: request.path)
        }
        // Outermost first: every request is named by its route template before anything can answer it; the
        // access log and metrics see the final status; CORS headers reach error answers too; preflights
        // pass without a token and in read-only mode; a missing token is 401 before a write is 403. An
        // idempotency key wraps everything that writes, a whole batch included, and replays what was stored;
        // each batch operation passes through everything below the batch, so it is tagged, checked against
        // its If-Match and routed exactly like a request of its own. Database errors get their API meaning
        // before any of those see them.
        var middleware: [any Middleware] = [
            RouteMiddleware(router: router, otherRoutes: [BatchMiddleware.path]),
            ChangeFeedKickMiddleware(sequencer: sync.sequencer),
            AccessLogMiddleware(logger: logger),
            MetricsMiddleware(factory: metrics),
            CORSMiddleware(allowedOrigins: options.corsOrigins.map { .only($0) } ?? .any, exposedHeaders: exposedHeaders),
        ]
        if let token = options.apiToken { middleware.append(BearerTokenMiddleware(token: token, openPaths: openPaths)) }
        if options.isReadOnly { middleware.append(ReadOnlyMiddleware()) }
        middleware += [
            DelayMiddleware(defaultDelay: options.delay),
            // Twice: here for the queries of idempotency keys, batches and preconditions themselves (a
            // database outage is a 503 there too), innermost so each batch operation gets its own answer.
            DatabaseErrorMiddleware(),
            IdempotencyMiddleware(idempotency: idempotency, isRouted: isRouted),
            BatchMiddleware(database: database, idempotency: idempotency, maximumOperations: options.batchLimit),
            EntityTagMiddleware(representationHeaders: representationHeaders),
            PreconditionMiddleware(database: database, representationHeaders: representationHeaders, isRouted: isRouted),
            DatabaseErrorMiddleware(),
        ]
        let connectionsPerLoop = options.connectionsPerLoop
        return Service(
            handler: router.wrapped(in: middleware), notifications: sync.notifications, sequencer: sync.sequencer,
            loopSetup: { reactor in
                guard connectionsPerLoop > 0 else { return {} }
                return LoopConnections.attach(to: reactor, pool: pool, count: connectionsPerLoop)
            })
    }

    /// Headers that belong to a representation as much as its body does, so they count in its ETag: a
    /// page whose records are unchanged but whose total moved is a different answer.
    static let representationHeaders = ["X-Total-Count"]

    /// The API's handler and the state that outlives single requests.
    public struct Service: Sendable {
        public let handler: any Handler
        let notifications: Notifications
        let sequencer: BackgroundDrain
        /// Pass to `Server(…loopSetup:)`: gives each event loop its own database connections.
        public let loopSetup: LoopSetup

        /// Answers every waiting long-poll now, and every later one at once, so that a draining server
        /// answers its pollers (SPEC §6) instead of cutting them off at the grace period. Call it before
        /// `Server.shutdown`.
        public func beginShutdown() {
            notifications.stop()
        }

        /// Stamps what this process's last writes committed, then closes the sequencer's connection. Call it
        /// after `Server.shutdown`, once no request can write any more.
        public func finishShutdown() {
            sequencer.stop()
        }

        /// Long-polls of `GET /changes` waiting right now.
        public var longPollWaiters: Int {
            notifications.waiterCount
        }
    }
}
