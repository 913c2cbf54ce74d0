import Foundation
import Sockets
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A minimal event loop for driving `LoopConnections` without the HTTP server: one thread in
/// `epoll_wait`, watched descriptors, and a task executor, so a test task runs on that thread the way a
/// request handler runs on its server loop's.
final class TestReactor: TaskExecutor, Reactor, @unchecked Sendable {
    // @unchecked Sendable: `watchers` and `checks` are touched only on the reactor thread; `jobs` is behind its Mutex.
    private let epoll: Epoll
    private let wakeUp: EventNotifier
    private let jobs = Mutex<(work: [UnownedJob], isStopped: Bool)>(([], false))
    private var watchers: [Int32: (Epoll.Events) -> Void] = [:]
    private var checks: [(ContinuousClock.Instant) -> Void] = []

    init() throws {
        epoll = try Epoll()
        wakeUp = try EventNotifier()
        try epoll.add(wakeUp.descriptor, for: .readable)
        let thread = Thread { [self] in run() }
        thread.start()
    }

    func stop() {
        jobs.withLock { $0.isStopped = true }
        try? wakeUp.notify()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.work.append(job) }
        try? wakeUp.notify()
    }

    func watch(_ descriptor: Int32, for events: Epoll.Events, handler: @escaping (Epoll.Events) -> Void) throws(SocketError) {
        if watchers.updateValue(handler, forKey: descriptor) == nil {
            try epoll.add(descriptor, for: events)
        } else {
            try epoll.modify(descriptor, for: events)
        }
    }

    func rewatch(_ descriptor: Int32, for events: Epoll.Events) throws(SocketError) {
        try epoll.modify(descriptor, for: events)
    }

    func unwatch(_ descriptor: Int32) {
        guard watchers.removeValue(forKey: descriptor) != nil else { return }
        try? epoll.remove(descriptor)
    }

    func everySecond(_ check: @escaping (ContinuousClock.Instant) -> Void) {
        checks.append(check)
    }

    private func run() {
        let ready = Epoll.ReadyList(capacity: 64)
        while true {
            let (work, isStopped) = jobs.withLock { state in
                defer { state.work = [] }
                return (state.work, state.isStopped)
            }
            for job in work { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if isStopped { return }
            guard work.isEmpty else { continue }
            try? epoll.wait(into: ready, timeoutMilliseconds: 100)
            for check in checks { check(.now) }
            for index in 0..<ready.count {
                let event = ready[index]
                if event.descriptor == wakeUp.descriptor {
                    try? wakeUp.drain()
                } else {
                    watchers[event.descriptor]?(event.events)
                }
            }
        }
    }
}
