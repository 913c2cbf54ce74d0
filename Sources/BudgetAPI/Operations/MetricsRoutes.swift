import CoreMetrics
import HTTPServer
import Postgres
import Prometheus

/// `GET /metrics`: everything the registry holds, in Prometheus' text format (docs/operations.md).
///
/// The request metrics come from `RequestMetrics` as requests are answered; the gauges below are
/// sampled when Prometheus scrapes, since pool use and long-poll waiters are states, not events:
/// `db_pool_connections` (the pool's size), `db_pool_connections_in_use` (running a job),
/// `db_pool_waiting` (jobs queued for a connection), the same three as `db_stream_pool_*` for the pool that
/// large answers are read from while they are sent (a connection stays in use for the whole answer), and
/// `changes_long_poll_waiters` (`GET /changes?wait=` suspended until something commits).
struct MetricsRoutes: Sendable {
    static let path = "/metrics"
    /// The content type of the text exposition format, version 0.0.4.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private let registry: PrometheusCollectorRegistry
    private let pools: [PoolGauges]
    private let notifications: Notifications
    private let longPollWaiters: CoreMetrics.Gauge

    /// - Parameter pools: each pool with the prefix of its gauges, e.g. `db_pool`.
    init(
        registry: PrometheusCollectorRegistry, factory: any MetricsFactory, pools: [(prefix: String, pool: ConnectionPool)],
        notifications: Notifications
    ) {
        self.registry = registry
        self.pools = pools.map { PoolGauges(prefix: $0.prefix, pool: $0.pool, factory: factory) }
        self.notifications = notifications
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
        for gauges in pools { gauges.record() }
        longPollWaiters.record(notifications.waiterCount)
        return Response(status: .ok, headers: ["Content-Type": Self.contentType], body: registry.emitToBuffer())
    }
}

/// The three gauges of one connection pool: its size, the connections in use and the jobs waiting.
private struct PoolGauges: Sendable {
    let pool: ConnectionPool
    let size: CoreMetrics.Gauge
    let inUse: CoreMetrics.Gauge
    let waiting: CoreMetrics.Gauge

    init(prefix: String, pool: ConnectionPool, factory: any MetricsFactory) {
        self.pool = pool
        size = CoreMetrics.Gauge(label: "\(prefix)_connections", factory: factory)
        inUse = CoreMetrics.Gauge(label: "\(prefix)_connections_in_use", factory: factory)
        waiting = CoreMetrics.Gauge(label: "\(prefix)_waiting", factory: factory)
    }

    func record() {
        let statistics = pool.statistics
        size.record(statistics.size)
        inUse.record(statistics.inUse)
        waiting.record(statistics.waiting)
    }
}
