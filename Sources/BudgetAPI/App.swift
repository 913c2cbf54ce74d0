import HTTPServer
import Logging
import Postgres

/// The budget API as one HTTP handler: every route and middleware is listed here, in one place.
public enum BudgetApp {
    /// Builds the handler the HTTP server runs; `migrator` lets `/ready` see unapplied migrations.
    public static func makeHandler(pool: ConnectionPool, migrator: Migrator, logger: Logger) -> any Handler {
        let database = Database(pool: pool)
        var router = Router()
        HealthRoutes(database: database, migrator: migrator).register(in: &router)
        RecordRoutes<Categories>(database: database).register(in: &router)
        CategoryTransactionRoutes(database: database).register(in: &router)
        RecordRoutes<Transactions>(database: database).register(in: &router)
        // Outermost first: the access log sees the final status, after database errors got their meaning.
        return router.wrapped(in: [
            AccessLogMiddleware(logger: logger),
            DatabaseErrorMiddleware(),
        ])
    }
}
