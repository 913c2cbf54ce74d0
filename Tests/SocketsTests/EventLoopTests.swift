import Sockets
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct EventLoopTests {
    /// An owner that records the loop's thread and ends the loop when asked.
    final class Owner: EventLoopOwner {
        let loop: EventLoop
        let thread = Mutex<pthread_t?>(nil)
        let hasEnded = Atomic<Bool>(false)
        private let isStopped = Atomic<Bool>(false)

        init() throws {
            loop = try EventLoop(sweepInterval: .milliseconds(10))
            loop.start(self)
        }

        /// Ends the loop and returns once it has closed its descriptors.
        func stop() async {
            isStopped.store(true, ordering: .sequentiallyConsistent)
            await withCheckedContinuation { done in loop.post({ done.resume() }, ifEnded: { done.resume() }) }
            // Bounded: a loop that never ends fails its test here instead of spinning for good.
            let deadline = ContinuousClock.now + .seconds(30)
            while !hasEnded.load(ordering: .sequentiallyConsistent) && ContinuousClock.now < deadline { await Task.yield() }
            if !hasEnded.load(ordering: .sequentiallyConsistent) { Issue.record("the event loop did not end within 30 s") }
        }

        var isOnLoopThread: Bool {
            guard let thread = thread.withLock({ $0 }) else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }

        func loopDidStart(_ loop: EventLoop) { thread.withLock { $0 = pthread_self() } }
        var wakeDeadline: ContinuousClock.Instant? { nil }
        func isFinished(now: ContinuousClock.Instant) -> Bool { isStopped.load(ordering: .sequentiallyConsistent) }
        func loopWillEnd(error: SocketError?) {}
        func loopDidEnd() { hasEnded.store(true, ordering: .sequentiallyConsistent) }
    }

    @Test func tasksPostedWorkAndWatchersRunOnTheLoopThread() async throws {
        let owner = try Owner()
        let loop = owner.loop
        #expect(await Task(executorPreference: loop) { owner.isOnLoopThread }.value)
        #expect(await withCheckedContinuation { done in loop.post { done.resume(returning: owner.isOnLoopThread) } })

        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let (reader, writer) = (ends[0], ends[1])
        let handled: Bool = await withCheckedContinuation { done in
            loop.post {
                do {
                    try loop.watch(reader, for: .readable) { _ in
                        loop.unwatch(reader)
                        done.resume(returning: owner.isOnLoopThread)
                    }
                } catch {
                    done.resume(returning: false)
                }
                var byte: UInt8 = 1
                _ = write(writer, &byte, 1)
            }
        }
        #expect(handled)
        await owner.stop()
    }

    @Test func workPostedAfterTheEndIsReleasedAndTasksStillFinish() async throws {
        let owner = try Owner()
        await owner.stop()
        let ranInstead = await withCheckedContinuation { done in
            owner.loop.post({ done.resume(returning: false) }, ifEnded: { done.resume(returning: true) })
        }
        #expect(ranInstead)
        // A task that prefers the ended loop runs on the global executor rather than being stranded.
        #expect(await Task(executorPreference: owner.loop) { 42 }.value == 42)
    }
}
