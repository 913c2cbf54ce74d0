import Logging
import Sockets
import Synchronization

/// An HTTP/1.1 server: binds, runs the event loops, and stops gracefully.
///
/// How the work is split between loop threads and handler tasks is written at the top of
/// Connection/ServerLoop.swift. Signals are the executable's business, not the server's.
public final class Server: Sendable {
    private struct Running {
        var listener: Socket
        var loops: [ServerLoop]
    }

    private let configuration: ServerConfiguration
    private let logger: Logger
    private let handlerForLoop: LoopSetup
    private let running = Mutex<Running?>(nil)

    /// A server whose every event loop serves `handler`.
    public convenience init(configuration: ServerConfiguration, handler: any Handler, logger: Logger) {
        self.init(configuration: configuration, logger: logger) { _ in LoopHandler(handler: handler) }
    }

    /// A server whose event loops each serve the handler `handlerForLoop` makes on that loop's thread as it
    /// starts, so the handler can hold what belongs to its loop (database connections driven by its epoll).
    public init(configuration: ServerConfiguration, logger: Logger, handlerForLoop: @escaping LoopSetup) {
        self.handlerForLoop = handlerForLoop
        self.configuration = configuration
        self.logger = logger
    }

    /// Binds the listening socket, starts the event loops, and returns the bound port.
    public func start() throws -> Int {
        try running.withLock { running in
            precondition(running == nil, "Server.start() called twice")
            let address = try SocketAddress(host: configuration.host, port: configuration.port)
            let listener = try Socket.listen(on: address)
            do {
                let port = try listener.localAddress().port
                let group = LoopGroup()
                let loops = try (0..<max(1, configuration.eventLoopCount)).map { _ in
                    try ServerLoop(listener: listener, limits: configuration.limits, group: group, setup: handlerForLoop, logger: logger)
                }
                group.join(loops)
                loops.forEach { $0.start() }
                running = Running(listener: listener, loops: loops)
                logger.info("listening on \(configuration.host):\(port) with \(loops.count) event loop(s)")
                return port
            } catch {
                listener.close()
                throw error
            }
        }
    }

    /// Stops accepting, lets requests in flight finish within `gracePeriod`, closes idle
    /// keep-alive connections, and returns once every loop has ended.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        guard
            let stopping = running.withLock({ running in
                defer { running = nil }; return running
            })
        else { return }
        let deadline = ContinuousClock.now + gracePeriod
        // First of all, so that every answer from here on says `Connection: close`, however long the rest takes.
        for loop in stopping.loops { loop.beginStopping() }
        for loop in stopping.loops { await loop.stopAccepting() }
        // Every loop has left the listener alone now, so the descriptor can go; new clients get refused.
        stopping.listener.close()
        await withTaskGroup(of: Void.self) { group in
            for loop in stopping.loops {
                group.addTask { await loop.drain(until: deadline) }
            }
        }
        stopping.loops.first?.group.dissolve()
        logger.info("server stopped")
    }
}
