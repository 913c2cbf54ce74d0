import HTTPServer
import Logging
import Postgres

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

        public init() {}
    }

    /// Headers a browser app may read from our answers (SPEC §6).
    static let exposedHeaders = ["X-Total-Count", "Link", "Location", "ETag", "X-Sync-Seq"]

    /// Builds the handler the HTTP server runs; `migrator` lets `/ready` see unapplied migrations.
    public static func makeHandler(
        pool: ConnectionPool,
        migrator: Migrator,
        options: Options = Options(),
        logger: Logger
    ) -> any Handler {
        let database = Database(pool: pool)
        var router = Router()
        HealthRoutes(database: database, migrator: migrator).register(in: &router)
        SyncRoutes(database: database, tombstoneRetention: options.tombstoneRetention, logger: logger).register(in: &router)
        RecordRoutes<Categories>(database: database).register(in: &router)
        CategoryTransactionRoutes(database: database).register(in: &router)
        RecordRoutes<Transactions>(database: database).register(in: &router)
        CollectionRoutes(database: database, allowReset: options.allowsReset).register(in: &router)
        // Outermost first: the access log sees the final status; CORS headers reach error answers too;
        // preflights pass read-only mode; database errors get their meaning before anyone else sees them.
        var middleware: [any Middleware] = [
            AccessLogMiddleware(logger: logger),
            CORSMiddleware(allowedOrigins: options.corsOrigins.map { .only($0) } ?? .any, exposedHeaders: exposedHeaders),
        ]
        if options.isReadOnly { middleware.append(ReadOnlyMiddleware()) }
        middleware.append(DelayMiddleware(defaultDelay: options.delay))
        middleware.append(DatabaseErrorMiddleware())
        return router.wrapped(in: middleware)
    }
}
