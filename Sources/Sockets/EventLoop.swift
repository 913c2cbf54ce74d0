// Threading design of an event loop (this file owns it; what the HTTP server builds on it is written at
// the top of HTTPServer's Connection/ServerLoop.swift).
//
// - Each EventLoop is one OS thread blocked in epoll_wait. That thread alone touches what is registered
//   with the loop: the watched descriptors and their handlers, and the periodic checks.
// - The loop is a task executor (SE-0417): a Task whose executor preference is the loop runs on the loop's
//   thread between epoll waits, and so does every continuation that resumes it. The loop is also a
//   `Reactor`, whose `epoll_wait` watches the descriptors others register, such as a database driver's
//   non-blocking connections; waiting on them costs no thread and no hand-off. The price: code on the loop
//   must never block, and everything on one loop shares its thread, so there is one loop per core.
// - Jobs and other work reach the loop through its `inbox` (a Mutex). A post from another thread writes
//   the eventfd only if the inbox was empty; a post from the loop thread itself writes nothing, because
//   the loop drains the inbox until it is empty before it waits again.
// - Work posted after the loop ended is released instead: a job runs on the global executor, so no task
//   is ever stranded, and other work runs what its poster gave for that case.
// - Time: epoll_wait never sleeps longer than the sweep interval (or the owner's earlier deadline), and one
//   sweep per interval runs the periodic checks. No timer per request.

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What an event loop's owner does on the loop's thread, besides the watchers and work the loop runs.
///
/// Every method is called on the loop's thread; `Sendable` because the loop hands the owner to that thread.
public protocol EventLoopOwner: AnyObject, Sendable {
    /// The thread has started and not yet waited.
    func loopDidStart(_ loop: EventLoop)
    /// The latest instant the next wait may end, when that is sooner than the next sweep.
    var wakeDeadline: ContinuousClock.Instant? { get }
    /// Whether the loop should end; asked after every turn.
    func isFinished(now: ContinuousClock.Instant) -> Bool
    /// The loop is ending, because `isFinished` said so or, with `error`, because `epoll_wait` failed;
    /// its watchers and descriptors are still there.
    func loopWillEnd(error: SocketError?)
    /// The loop has closed its descriptors; work posted from now on is released, not run.
    func loopDidEnd()
}

/// One epoll thread: the descriptors watched through it, the work posted to it, and the tasks it runs.
///
/// `@unchecked Sendable` invariant: after `start(_:)`, every stored `var` is used only on the loop thread
/// (before it, only by the thread that creates the loop); other threads reach the loop only through
/// `post(_:ifEnded:)` and `enqueue(_:)`, which touch nothing but the Mutex-guarded `inbox` and the eventfd.
public final class EventLoop: @unchecked Sendable {
    private enum Work {
        /// A piece of a task that prefers this loop's executor.
        case job(UnownedJob)
        case call(@Sendable () -> Void, ifEnded: @Sendable () -> Void)
    }

    private struct Inbox {
        var work: [Work] = []
        /// Set when the loop has ended; later work is released and the eventfd is gone.
        var isClosed = false
    }

    /// How often the periodic checks run, at most.
    public let sweepInterval: Duration
    private let epoll: Epoll
    private let notifier: EventNotifier
    private let inbox = Mutex(Inbox())
    /// Set once by the loop thread as it starts (0 before); read by `post` to skip waking itself. An atomic,
    /// not a Mutex: every job and answer posted on the loop asks it.
    private let thread = Atomic<UInt>(0)
    // Loop thread only, like every var below.
    /// The time of the current turn, read once after each wait.
    public private(set) var now: ContinuousClock.Instant = .now
    private var watchers: [Int32: (Epoll.Events) -> Void] = [:]
    /// What `everySecond` asked for, run on each sweep.
    private var periodicChecks: [(ContinuousClock.Instant) -> Void] = []

    public init(sweepInterval: Duration) throws(SocketError) {
        self.sweepInterval = sweepInterval
        epoll = try Epoll()
        notifier = try EventNotifier()
        try epoll.add(notifier.descriptor, for: .readable)
    }

    /// Starts the loop's thread; it runs until `owner` says it is finished.
    public func start(_ owner: some EventLoopOwner) {
        DetachedThread.start { self.run(owner) }
    }

    /// Runs `work` on the loop's thread; if the loop has ended, runs `ifEnded` on the calling thread instead.
    public func post(_ work: @escaping @Sendable () -> Void, ifEnded: @escaping @Sendable () -> Void = {}) {
        post(.call(work, ifEnded: ifEnded))
    }

    private func post(_ work: Work) {
        let fromLoop = isLoopThread
        let isPosted = inbox.withLock { inbox in
            guard !inbox.isClosed else { return false }
            let wasEmpty = inbox.work.isEmpty
            inbox.work.append(work)
            // Inside the lock, so the loop cannot close the eventfd between the check and the write.
            if wasEmpty && !fromLoop { try? notifier.notify() }
            return true
        }
        // The loop has ended: whoever waits for this work must not wait forever.
        if !isPosted { release(work) }
    }

    private func release(_ work: Work) {
        switch work {
        case .job(let job): globalConcurrentExecutor.enqueue(job)
        case .call(_, let ifEnded): ifEnded()
        }
    }

    /// Whether the calling thread is this loop's own.
    public var isLoopThread: Bool {
        let thread = thread.load(ordering: .acquiring)
        return thread != 0 && pthread_equal(pthread_t(thread), pthread_self()) != 0
    }

    /// Stops calling the handler of a descriptor that is about to be closed, without an `epoll_ctl`:
    /// closing the descriptor takes it out of the epoll set.
    public func unwatchBeforeClose(_ descriptor: Int32) {
        watchers[descriptor] = nil
    }
}

extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        post(.job(UnownedJob(job)))
    }
}

extension EventLoop: Reactor {
    public func watch(_ descriptor: Int32, for events: Epoll.Events, handler: @escaping (Epoll.Events) -> Void) throws(SocketError) {
        if watchers.updateValue(handler, forKey: descriptor) == nil {
            do {
                try epoll.add(descriptor, for: events)
            } catch {
                // A descriptor closed and reused by its owner is still known here but no longer to epoll.
                guard error.errno == EEXIST else { watchers[descriptor] = nil; throw error }
                try epoll.modify(descriptor, for: events)
            }
        } else {
            try rewatch(descriptor, for: events)
        }
    }

    public func rewatch(_ descriptor: Int32, for events: Epoll.Events) throws(SocketError) {
        do {
            try epoll.modify(descriptor, for: events)
        } catch  where error.errno == ENOENT {
            // Closed and reopened under the same number: epoll forgot it when it was closed.
            try epoll.add(descriptor, for: events)
        }
    }

    public func unwatch(_ descriptor: Int32) {
        guard watchers.removeValue(forKey: descriptor) != nil else { return }
        try? epoll.remove(descriptor)
    }

    public func everySecond(_ check: @escaping (ContinuousClock.Instant) -> Void) {
        periodicChecks.append(check)
    }
}

/// The loop thread's side: everything here runs on that thread only.
extension EventLoop {
    private func run(_ owner: some EventLoopOwner) {
        thread.store(UInt(pthread_self()), ordering: .releasing)
        now = .now
        owner.loopDidStart(self)
        let ready = Epoll.ReadyList(capacity: 256)
        var nextSweep = ContinuousClock.now + sweepInterval
        while true {
            let wakeAt = owner.wakeDeadline.map { min($0, nextSweep) } ?? nextSweep
            let wait = max(.zero, wakeAt - ContinuousClock.now)
            do {
                try epoll.wait(into: ready, timeoutMilliseconds: Int32(wait.wholeMilliseconds + 1))
            } catch {
                return finish(owner, error: error)
            }
            now = .now
            for index in 0..<ready.count {
                let event = ready[index]
                if event.descriptor == notifier.descriptor {
                    try? notifier.drain()
                } else {
                    watchers[event.descriptor]?(event.events)
                }
            }
            // Jobs and work this thread posted to itself wake nobody: run them all before waiting again.
            while runInbox() {}
            if now >= nextSweep {
                nextSweep = now + sweepInterval
                for check in periodicChecks { check(now) }
            }
            if owner.isFinished(now: now) { return finish(owner, error: nil) }
        }
    }

    /// Runs everything in the inbox; false when there was nothing.
    private func runInbox() -> Bool {
        let work = inbox.withLock { inbox in
            defer { inbox.work.removeAll(keepingCapacity: true) }
            return inbox.work
        }
        for item in work {
            switch item {
            case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
            case .call(let call, _): call()
            }
        }
        return !work.isEmpty
    }

    /// Lets the owner close what it has, closes the loop's descriptors, and releases work that came too late.
    private func finish(_ owner: some EventLoopOwner, error: SocketError?) {
        let pending = inbox.withLock { inbox in
            inbox.isClosed = true
            defer { inbox.work = [] }
            return inbox.work
        }
        owner.loopWillEnd(error: error)
        periodicChecks = []
        watchers = [:]
        notifier.close()
        epoll.close()
        owner.loopDidEnd()
        for work in pending { release(work) }
    }
}
