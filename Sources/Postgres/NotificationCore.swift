import Foundation
import Logging
import Synchronization

/// The shared state of a `Notifications`: the generation counter and the suspended waiters.
///
/// See the design note in Notifications.swift. Every mutable field lives in `state`, a `Mutex`; the
/// listener thread and any task touch it only through the methods below.
final class NotificationCore: Sendable {
    let url: String
    let channel: String
    let logger: Logger

    /// How long the listener thread blocks in poll() at most: the precision of waiter deadlines and of `stop`.
    static let tick = Duration.milliseconds(100)

    private struct Waiter {
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<UInt64, Never>
    }

    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
        var isStarted = false
        var isStopped = false
    }

    private let state = Mutex(State())

    init(url: String, channel: String, logger: Logger) {
        self.url = url
        self.channel = channel
        self.logger = logger
    }

    var currentGeneration: UInt64 {
        state.withLock { $0.generation }
    }

    var waiterCount: Int {
        state.withLock { $0.waiters.count }
    }

    var isStopped: Bool {
        state.withLock { $0.isStopped }
    }

    /// Starts the listener thread the first time anyone asks; it holds the core, not the `Notifications`.
    func startIfNeeded() {
        let shouldStart = state.withLock { state in
            guard !state.isStarted, !state.isStopped else { return false }
            state.isStarted = true
            return true
        }
        guard shouldStart else { return }
        let listener = NotificationListener(core: self)
        let thread = Thread { listener.run() }
        thread.name = "postgres-listen-\(channel)"
        thread.start()
    }

    func makeWaiterID() -> UInt64 {
        state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
    }

    /// Suspends a waiter, or resumes it at once when its generation already passed, the task was
    /// cancelled (its handler may have run before this), or the listener stopped.
    func add(id: UInt64, after seen: UInt64, deadline: ContinuousClock.Instant,
             continuation: CheckedContinuation<UInt64, Never>) {
        let immediate: UInt64? = state.withLock { state in
            if state.generation > seen || state.isStopped || Task.isCancelled { return state.generation }
            state.waiters[id] = Waiter(deadline: deadline, continuation: continuation)
            return nil
        }
        if let immediate { continuation.resume(returning: immediate) }
    }

    /// Resumes one waiter early (its task was cancelled); nothing when it already ended.
    func resume(id: UInt64) {
        let ended = state.withLock { state in (state.waiters.removeValue(forKey: id), state.generation) }
        ended.0?.continuation.resume(returning: ended.1)
    }

    /// Counts a notification (or a fresh LISTEN) and resumes every waiter.
    func bumpGeneration() {
        let (woken, generation) = state.withLock { state in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return (Array(state.waiters.values), state.generation)
        }
        // Resumed outside the lock: a resumed task may call straight back into `add`.
        for waiter in woken { waiter.continuation.resume(returning: generation) }
    }

    /// Resumes the waiters whose deadline passed; returns how long until the next deadline, at most one tick.
    func expireWaiters(now: ContinuousClock.Instant = .now) -> Duration {
        let (expired, generation, next) = state.withLock { state in
            let expired = state.waiters.filter { $0.value.deadline <= now }
            for id in expired.keys { state.waiters.removeValue(forKey: id) }
            let next = state.waiters.values.map(\.deadline).min()
            return (Array(expired.values), state.generation, next)
        }
        for waiter in expired { waiter.continuation.resume(returning: generation) }
        guard let next else { return Self.tick }
        return max(.zero, min(Self.tick, next - now))
    }

    /// Marks the listener stopped and resumes every waiter; the thread notices within one tick.
    func stop() {
        let (woken, generation) = state.withLock { state in
            state.isStopped = true
            defer { state.waiters.removeAll() }
            return (Array(state.waiters.values), state.generation)
        }
        for waiter in woken { waiter.continuation.resume(returning: generation) }
    }
}
