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
