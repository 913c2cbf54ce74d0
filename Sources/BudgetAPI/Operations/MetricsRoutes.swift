import CoreMetrics
import HTTPServer
import Postgres
import Prometheus

/// `GET /metrics`: everything the registry holds, in Prometheus' text format (docs/operations.md).
///
/// The request metrics come from `RequestMetrics` as requests are answered; the gauges below are
/// sampled when Prometheus scrapes, since pool use and long-poll waiters are states, not events:
/// `db_pool_connections` (the pool's size), `db_pool_connections_in_use` (running a job),
/// `db_pool_waiting` (jobs queued for a connection) and `changes_long_poll_waiters` (`GET /changes?wait=`
/// suspended until something commits).
struct MetricsRoutes: Sendable {
    static let path = "/metrics"
    /// The content type of the text exposition format, version 0.0.4.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let registry: PrometheusCollectorRegistry
    private let pool: ConnectionPool
    private let notifications: Notifications
    private let poolSize: CoreMetrics.Gauge
    private let poolInUse: CoreMetrics.Gauge
    private let poolWaiting: CoreMetrics.Gauge
    private let longPollWaiters: CoreMetrics.Gauge

    init(registry: PrometheusCollectorRegistry, factory: any MetricsFactory, pool: ConnectionPool, notifications: Notifications) {
        self.registry = registry
        self.pool = pool
        self.notifications = notifications
        poolSize = CoreMetrics.Gauge(label: "db_pool_connections", factory: factory)
        poolInUse = CoreMetrics.Gauge(label: "db_pool_connections_in_use", factory: factory)
        poolWaiting = CoreMetrics.Gauge(label: "db_pool_waiting", factory: factory)
        longPollWaiters = CoreMetrics.Gauge(label: "changes_long_poll_waiters", factory: factory)
    }

    /// The backend that `RequestMetrics` and these gauges report to: `registry`, with request-duration
    /// buckets fit for an API whose long-polls last up to a minute.
    static func makeFactory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[RequestMetrics.requestDuration] = RequestMetrics.durationBuckets
        return factory
    }

    func register(in router: inout Router<Database>) {
        router.get(Self.path) { _, _ in scrape() }
    }

    func scrape() -> Response {
        let statistics = pool.statistics
        poolSize.record(statistics.size)
        poolInUse.record(statistics.inUse)
        poolWaiting.record(statistics.waiting)
        longPollWaiters.record(notifications.waiterCount)
        return Response(status: .ok, headers: ["Content-Type": Self.contentType], body: registry.emitToBuffer())
    }
}
