#if canImport(Glibc)
    import Glibc
#endif

/// Where the server listens, how many event loops it runs, and the limits it enforces.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 asks the kernel for a free port; `Server.start()` returns the one bound.
    public var port: Int
    public var limits: Limits
    /// Threads running epoll loops, which also run the handlers' tasks: one per core.
    public var eventLoopCount: Int

    public init(
        host: String = "127.0.0.1", port: Int = 3000, limits: Limits = Limits(),
        eventLoopCount: Int = ServerConfiguration.defaultEventLoopCount
    ) {
        self.host = host
        self.port = port
        self.limits = limits
        self.eventLoopCount = eventLoopCount
    }

    public static var defaultEventLoopCount: Int {
        max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
