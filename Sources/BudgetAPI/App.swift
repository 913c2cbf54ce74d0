import HTTPServer
import Logging
import Postgres
import Prometheus

/// The budget API: every route and everything a request passes is listed here, in one place.
public enum BudgetApp {
    /// How this server instance behaves beyond its routes (docs/configuration.md).
    public struct Options: Sendable {
        /// `--read-only`: every write answers 403.
        public var isReadOnly = false
        /// `--allow-reset`: `PUT /db` may replace everything, for client test suites.
        public var allowsReset = false
        /// Whether `GET /` answers the home page (docs/json-server.md); `--no-home` turns it off, and `/` is a 404.
        public var servesHomePage = true
        /// `--cors-origin`: the origins browsers may call from; nil allows every origin.
        public var corsOrigins: Set<String>?
        /// `--delay`: how long every answer waits, like a slow network.
        public var delay: Duration = .zero
        /// `--tombstone-retention`: how long `/changes` keeps deletions (30 days by default; docs/sync.md).
        public var tombstoneRetention: Duration = .seconds(30 * 24 * 3600)
        /// `--batch-limit`: the most operations one `POST /batch` may hold (413 beyond).
        public var batchLimit = BatchRoute.defaultMaximumOperations
        /// `--api-token`: when set, every route but the health checks needs `Authorization: Bearer <token>`.
        /// A secret: never log it.
        public var apiToken: String?
        /// `--signup open`: anyone may create a user with `POST /auth/users`; closed (the default), only
        /// `budget-server user add` does, and the route answers 403 (docs/configuration.md).
        public var signupIsOpen = false
        /// log2 of scrypt's N for new password hashes: 17 (N = 2^17, r = 8, p = 1, 128 MiB and about a quarter
        /// second a hash). Only tests lower it, to keep logins fast; a hash names its own cost, so any verifies.
        public var passwordCost = 17
        /// How long a cached token or role is trusted without a `budget_auth` notification (a backstop).
        public var authCacheLifetime: Duration = .seconds(60)
        /// Where request, pool and long-poll metrics go; `GET /metrics` renders it. Each `Options()` has a
        /// registry of its own, so servers in one process (tests) do not count into one another's.
        public var metricsRegistry = PrometheusCollectorRegistry()
        /// `--loop-connections`: PostgreSQL connections each event loop drives itself for single statements
        /// outside a transaction (the reads and plain writes); 0 sends everything through the pool.
        public var connectionsPerLoop = 4
        /// `--trust-proxy`: `Link` and the access log take the client's scheme, host and address from
        /// `Forwarded` / `X-Forwarded-*` (docs/operations.md); off, those headers are ignored.
        public var trustsProxy = false
        /// `--max-rows`: the most records any list answers, with `Link` to the rest where it cuts
        /// (docs/configuration.md); nil, the default, answers every record as json-server does.
        public var maxRows: Int?
        /// `--time-zone` and the instant taken as now: what today (a new transaction's default `date`) and
        /// `month=current` mean (docs/configuration.md).
        public var clock = CivilClock()

        public init() {}
    }

    /// Routes that answer without a token, so that orchestrators can probe the server (docs/operations.md).
    public static let openPaths: Set<String> = ["/health", "/ready"]

    /// `/ledgers/{L}/…` serves every route on ledger L; `/ledgers/{L}/members` are the ledger's own routes.
    public static let ledgerScope = PathScope(segment: "ledgers", parameter: "ledger", keeping: ["members"])

    /// The channel 0016's triggers tell every process on that users, tokens or memberships changed.
    static let authChannel = "budget_auth"

    /// The routes that take bodies over the server's 1 MiB default, with their limits: pass to
    /// `Limits.maxBodyBytesByPath` (docs/operations.md, Limits).
    public static let maxBodyBytesByPath = [StatementImport.path: StatementImport.maxBodyBytes]

    /// Headers a browser app may read from our answers (docs/json-server.md).
    static let exposedHeaders = ["X-Total-Count", "Link", "Location", "Content-Location", "ETag", "X-Sync-Seq", "Idempotent-Replayed", "Retry-After"]

    /// Every answer must be revalidated before a cache reuses it, as json-server's answers say (with its exact
    /// fields, for HTTP/1.0 caches too): with our ETags a revalidation is a cheap 304.
    static let cachingHeaders: Headers = ["Cache-Control": "no-cache", "Pragma": "no-cache", "Expires": "-1"]

    /// Headers that belong to a representation as much as its body does, so they count in its ETag: a
    /// page whose records are unchanged but whose total moved is a different answer.
    static let representationHeaders = ["X-Total-Count"]

    /// What a 400 for a percent-encoded `If-Match`, `If-None-Match` or `Idempotency-Key` adds after naming
    /// the cause (`PercentEncodedHeader`): where the remedy is written down.
    static let percentEncodingAdvice =
        "docs/clients.md shows how to stop a generated client (swift-openapi-generator's runtime, for one) from doing it."

    /// The API's handlers, one per event loop, and the state they share; `migrator` lets `/ready` see
    /// unapplied migrations, and `streamPool` holds the connections large answers are read from while they are
    /// sent (`--stream-pool-size`; make it with `streamPoolConfiguration(for:size:)`).
    ///
    /// Every request takes the same path (docs/architecture.md): `RequestPipeline` routes it once, CORS,
    /// gates, its route's endpoint, one place that renders errors, the access log and metrics. What only
    /// some routes need wraps just those routes' handlers here, once: validators on every route,
    /// preconditions on the record writes, idempotency keys on every write.
    public static func makeService(
        pool: ConnectionPool,
        streamPool: ConnectionPool,
        migrator: Migrator,
        options: Options = Options(),
        logger: Logger
    ) -> Service {
        let sync = SyncRoutes(pool: pool, tombstoneRetention: options.tombstoneRetention, logger: logger)
        let metrics = MetricsRoutes.makeFactory(registry: options.metricsRegistry)
        var router = Router<Database>()
        HealthRoutes(pool: pool, migrator: migrator).register(in: &router)
        MetricsRoutes(
            registry: options.metricsRegistry, factory: metrics, pools: [("db_pool", pool), ("db_stream_pool", streamPool)],
            notifications: sync.notifications
        )
        .register(in: &router)
        OpenAPIRoutes().register(in: &router)
        if options.servesHomePage { HomeRoutes(clock: options.clock).register(in: &router) }
        sync.register(in: &router)
        for resource in TypedResources.all { resource.register(in: &router, clock: options.clock) }
        MonthRoutes(clock: options.clock).register(in: &router)
        CollectionRoutes(allowReset: options.allowsReset, clock: options.clock).register(in: &router)
        let authCache = AuthCache(
            notifications: Notifications(url: pool.configuration.url, channel: authChannel, logger: logger),
            lifetime: options.authCacheLifetime)
        authCache.start()
        AuthRoutes(hasher: PasswordHasher(logN: options.passwordCost), signupIsOpen: options.signupIsOpen, cache: authCache)
            .register(in: &router)
        LedgerRoutes(cache: authCache).register(in: &router)

        let tags = EntityTagMiddleware(representationHeaders: representationHeaders, percentEncodingAdvice: percentEncodingAdvice)
        let combinableCreates = TypedResources.all.reduce(into: [RouteSignature: CombinableCreate]()) { creates, resource in
            creates.merge(resource.combinableCreates(clock: options.clock)) { first, _ in first }
        }
        let idempotency = Idempotency(creates: KeyedCreates(creates: combinableCreates, tags: tags))
        let preconditions = Preconditions(representationHeaders: representationHeaders)
        let keys = IdempotentWrites(idempotency: idempotency)
        // Innermost first: a precondition is judged in the write's transaction; the answer gets its ETag
        // before a key stores it, so a replay carries the same one.
        var routes = router.mapHandlers { method, handlers in
            var handler = handlers[method]!
            if Preconditions.methods.contains(method), let read = handlers[.get] {
                handler = preconditions.wrapping(handler, read: read)
            }
            handler = tags.wrapping(handler)
            if IdempotentWrites.methods.contains(method) { handler = keys.wrapping(handler) }
            return handler
        }
        // A batch's operations take every route but the batch itself; the batch as a whole takes a key.
        let batch = BatchRoute(
            routes: routes, idempotency: idempotency, maximumOperations: options.batchLimit, scope: ledgerScope,
            combinableCreates: combinableCreates, tags: tags)
        routes.post(BatchRoute.path, keys.wrapping { request, database in try await batch.respond(to: request, database: database) })

        // The gates run inside the access check, after the caller is known: a missing token is 401 before a
        // write is 403.
        var gates: [any RequestGate] = []
        if options.isReadOnly { gates.append(ReadOnlyGate()) }
        gates.append(DelayGate(defaultDelay: options.delay))
        let access = Access(
            cache: authCache, apiToken: options.apiToken.map { BearerTokenGate(token: $0) }, signupIsOpen: options.signupIsOpen,
            gates: gates)
        let cors = CORSPolicy(allowedOrigins: options.corsOrigins.map { .only($0) } ?? .any, exposedHeaders: exposedHeaders)
        let observers: [any RequestObserver] = [AccessLog(logger: logger), RequestMetrics(factory: metrics)]
        let sequencer = sync.sequencer
        // Every process posts due schedules (SchedulePoster says why that is safe), but a read-only one, which
        // writes nothing; what it posts is stamped for the feed at once, like a request's write.
        let poster = SchedulePoster(pool: pool, clock: options.clock, logger: logger, onPosted: { sequencer.kick() })
        if !options.isReadOnly { poster.start() }
        let connectionsPerLoop = options.connectionsPerLoop
        let trustsProxy = options.trustsProxy
        let streams = StreamSettings(pool: streamPool, maxRows: options.maxRows)
        return Service(
            notifications: sync.notifications, sequencer: sequencer, authCache: authCache, schedulePoster: poster, routes: routes.routes
        ) { [routes] reactor in
            let loopConnections =
                connectionsPerLoop > 0
                ? LoopConnections(reactor: reactor, pool: pool, count: connectionsPerLoop) : nil
            let pipeline = RequestPipeline(
                router: routes, context: Database(pool: pool, streams: streams, runner: loopConnections), cors: cors,
                observers: observers, headers: cachingHeaders, trustsProxy: trustsProxy, scope: ledgerScope, logger: logger,
                translate: APIError.translating, authorize: access.authorize,
                onAnswer: { request, response in
                    // Stamps a write's changes for the feed within about a commit instead of at the next
                    // sweep (docs/change-feed.md); after the answer, so after its commit. Never waits.
                    if response.status.isSuccess, !request.method.isSafe { sequencer.kick() }
                })
            return LoopHandler(handler: pipeline, teardown: { loopConnections?.close() })
        }
    }

    /// The stream pool's configuration: the main pool's database and timeouts, `size` connections, each opened
    /// when a large answer first needs it.
    public static func streamPoolConfiguration(for pool: PoolConfiguration, size: Int) -> PoolConfiguration {
        var configuration = pool
        configuration.size = size
        configuration.connectsOnDemand = true
        return configuration
    }

    /// The API's handlers and the state that outlives single requests.
    public struct Service: Sendable {
        let notifications: Notifications
        let sequencer: BackgroundDrain
        let authCache: AuthCache
        /// Posts due schedules at start and every minute; tests run it at will.
        public let schedulePoster: SchedulePoster
        /// Every route the service registered (method and pattern, unscoped: each also serves under
        /// `/ledgers/{L}/…` unless `Access` keeps it unscoped): what the isolation test walks.
        public let routes: [RouteSignature]
        /// Pass to `Server(configuration:logger:handlerForLoop:)`: makes each event loop's handler, on that
        /// loop's own database connections.
        public let handlerForLoop: LoopSetup

        /// Answers every waiting long-poll now, and every later one at once, so that a draining server
        /// answers its pollers instead of cutting them off at the grace period. Call it before
        /// `Server.shutdown`.
        public func beginShutdown() {
            schedulePoster.stop()
            notifications.stop()
            authCache.stop()
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
