/// How a `ConnectionPool` connects and how long callers and statements may wait.
public struct PoolConfiguration: Sendable {
    /// A libpq URL or conninfo string.
    public var url: String
    /// Number of connections, and so of worker threads.
    public var size: Int
    /// How long a job may wait for a free connection before failing with `.poolTimeout`.
    public var checkoutTimeout: Duration
    /// Server-side `statement_timeout` for every pooled connection; nil leaves the server's default.
    public var statementTimeout: Duration?
    /// Whether a worker connects only when its first job arrives, rather than as the pool starts: for a pool
    /// most processes never use (the stream pool of large answers).
    public var connectsOnDemand: Bool

    public init(
        url: String, size: Int = 8, checkoutTimeout: Duration = .seconds(5), statementTimeout: Duration? = .seconds(30),
        connectsOnDemand: Bool = false
    ) {
        precondition(size > 0, "a pool needs at least one connection")
        self.url = url
        self.size = size
        self.checkoutTimeout = checkoutTimeout
        self.statementTimeout = statementTimeout
        self.connectsOnDemand = connectsOnDemand
    }
}
