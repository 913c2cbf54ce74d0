/// Size and time limits on requests (docs/operations.md, Limits); exceeding one is answered by the connection.
public struct Limits: Sendable {
    /// Longest request line; longer → 414.
    public var maxRequestLineBytes: Int
    /// Longest header section (all field lines); longer → 431.
    public var maxHeaderBytes: Int
    /// Largest decoded body; larger → 413.
    public var maxBodyBytes: Int
    /// Paths whose requests may carry a larger body than `maxBodyBytes`, with their own limit, e.g. an upload
    /// route; matched against the end of the request target's decoded path, so that the same route under a
    /// prefix (`/ledgers/7/…`) or an owner (`/accounts/3/…`) keeps its limit. Keys start with `/`, so a match
    /// ends on a segment boundary.
    public var maxBodyBytesByPath: [String: Int] = [:]
    /// From a request's first byte until it is complete; slower → 408 and close.
    public var requestTimeout: Duration
    /// Keep-alive connection with no request under way; longer → closed silently.
    public var idleTimeout: Duration
    /// Most header lines in one request (or chunked trailer); more → 431.
    public var maxHeaderCount: Int
    /// Requests one connection may carry; the last is answered with `Connection: close`.
    public var maxRequestsPerConnection: Int
    /// Open connections across all event loops; one more is answered 503 and closed, the others unaffected.
    public var maxConnections: Int

    public init(
        maxRequestLineBytes: Int = 8 * 1024, maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1024 * 1024,
        requestTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
        maxHeaderCount: Int = 100, maxRequestsPerConnection: Int = 10_000, maxConnections: Int = 16_384
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.maxHeaderCount = maxHeaderCount
        self.maxRequestsPerConnection = maxRequestsPerConnection
        self.maxConnections = maxConnections
    }

    /// The largest body a request to `path` may carry.
    public func maxBodyBytes(forPath path: String) -> Int {
        if let limit = maxBodyBytesByPath[path] { return limit }
        for (suffix, limit) in maxBodyBytesByPath where path.hasSuffix(suffix) { return limit }
        return maxBodyBytes
    }
}
