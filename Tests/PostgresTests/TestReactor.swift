import Postgres
import Sockets
import Synchronization

/// A Sockets `EventLoop` run on its own, for driving `LoopConnections` without the HTTP server: a test task
/// runs on its thread the way a request handler runs on its server loop's. It ends when `stop()` is called.
final class TestReactor: EventLoopOwner {
    let loop: EventLoop
    private let isStopped = Atomic<Bool>(false)

    init() throws {
        loop = try EventLoop(sweepInterval: .milliseconds(100))
        loop.start(self)
    }

    func stop() {
        isStopped.store(true, ordering: .sequentiallyConsistent)
        loop.post {}  // wakes the loop, which then sees the flag
    }

    func loopDidStart(_ loop: EventLoop) {}
    var wakeDeadline: ContinuousClock.Instant? { nil }
    func isFinished(now: ContinuousClock.Instant) -> Bool { isStopped.load(ordering: .sequentiallyConsistent) }
    func loopWillEnd(error: SocketError?) {}
    func loopDidEnd() {}
}

extension TestReactor {
    /// Runs `body` as a task on a fresh reactor's thread, with up to `count` of `pool`'s connections
    /// attached to that loop, the way a request handler runs on its server loop; closes them afterwards.
    static func withLoopConnections<T: Sendable>(
        pool: ConnectionPool, count: Int, _ body: @escaping @Sendable (LoopConnections) async throws -> T
    ) async throws -> T {
        let testReactor = try TestReactor()
        let reactor = testReactor.loop
        defer { testReactor.stop() }
        // Made on the reactor's thread, as a server makes each loop's connections as the loop starts.
        let loop = await Task(executorPreference: reactor) {
            LoopConnections(reactor: reactor, pool: pool, count: count)
        }.value
        let result = await Task(executorPreference: reactor) { () async -> Result<T, any Error> in
            do { return .success(try await body(loop)) } catch { return .failure(error) }
        }.value
        await Task(executorPreference: reactor) { loop.close() }.value
        return try result.get()
    }
}
