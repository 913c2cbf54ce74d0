import CoreMetrics
import Synchronization

/// Counts, times and gauges requests through swift-metrics, labelled by route template, never by raw path.
///
/// - `http_requests_total{method,route,status}`: a counter of answered requests;
/// - `http_request_duration_seconds{method,route}`: a timer (a histogram with Prometheus) of how long
///   answers took, long-polls included;
/// - `http_requests_in_flight`: a meter (a gauge) of requests being answered right now.
///
/// `route` is `Request.route` (see `Router.resolve`) or `unmatched`; `method` is one of the methods the
/// server knows or `other`, so no label value comes from what a client made up. The metric objects are
/// made once per label set, through the factory given, not the global `MetricsSystem`: each server (each
/// test) can have a registry of its own.
public struct RequestMetrics: RequestObserver {
    public static let requestsTotal = "http_requests_total"
    public static let requestDuration = "http_request_duration_seconds"
    public static let requestsInFlight = "http_requests_in_flight"

    /// Histogram buckets for `http_request_duration_seconds`: 1 ms to 60 s, the longest long-poll.
    public static let durationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30), .seconds(60),
    ]

    private static let knownMethods: Set<Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    private let inFlight: Meter
    private let series: Series

    public init(factory: any MetricsFactory) {
        inFlight = Meter(label: Self.requestsInFlight, factory: factory)
        series = Series(factory: factory)
    }

    public func requestStarted(_ request: Request) {
        inFlight.increment()
    }

    public func requestFinished(_ request: Request, response: Response, duration: Duration) {
        inFlight.decrement()
        let method = Self.knownMethods.contains(request.method) ? request.method.rawValue : "other"
        let route = request.fullRoute ?? AccessLog.unmatchedRoute
        series.record(method: method, route: route, status: response.status.code, duration: duration)
    }
}

/// The metric objects of each label set, made on first use and kept: making one goes through the
/// backend's registry and its lock, which a request should not pay for every time.
private final class Series: Sendable {
    private struct Key: Hashable {
        let method: String
        let route: String
    }

    private struct Entry {
        let duration: CoreMetrics.Timer
        var counters: [Int: Counter]
    }

    private let factory: any MetricsFactory
    private let entries = Mutex<[Key: Entry]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func record(method: String, route: String, status: Int, duration elapsed: Duration) {
        let (duration, counter) = metrics(method: method, route: route, status: status)
        duration.recordNanoseconds(elapsed.wholeMicroseconds * 1000)
        counter.increment()
    }

    private func metrics(method: String, route: String, status: Int) -> (CoreMetrics.Timer, Counter) {
        entries.withLock { entries in
            let key = Key(method: method, route: route)
            var entry =
                entries[key]
                ?? Entry(
                    duration: CoreMetrics.Timer(
                        label: RequestMetrics.requestDuration, dimensions: [("method", method), ("route", route)],
                        factory: factory
                    ),
                    counters: [:]
                )
            if let counter = entry.counters[status] { return (entry.duration, counter) }
            let counter = Counter(
                label: RequestMetrics.requestsTotal,
                dimensions: [("method", method), ("route", route), ("status", String(status))],
                factory: factory
            )
            entry.counters[status] = counter
            entries[key] = entry
            return (entry.duration, counter)
        }
    }
}
