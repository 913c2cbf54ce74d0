import Foundation
import Logging
import Synchronization

/// The shared state of a `Notifications`: the generation counters and the suspended waiters.
///
/// See the design note in Notifications.swift. Every mutable field lives in `state`, a `Mutex`; the
/// listener thread and any task touch it only through the methods below.
final class NotificationCore: Sendable {
    let url: String
    let channel: String
    let logger: Logger
    /// The topics a payload names, nil for "every topic"; nil itself: every notification wakes everyone.
    let topics: (@Sendable (String) -> [Int64]?)?

    /// How long the listener thread blocks in poll() at most: the precision of waiter deadlines and of `stop`.
    static let tick = Duration.milliseconds(100)

    private struct Waiter {
        let deadline: ContinuousClock.Instant
        /// What the waiter waits for: one topic's notifications, or (nil) any notification.
        let topic: Int64?
        let continuation: CheckedContinuation<UInt64, Never>
    }

    private struct State {
        /// Grows with every wake-up of any kind; a topic's generation is the value it had when that topic
        /// (or every topic) was last woken.
        var generation: UInt64 = 0
        var topicGenerations: [Int64: UInt64] = [:]
        /// The generation of the last wake-up of every topic at once ((re)connect, unparsable payload, signal()).
        var everyTopicGeneration: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
        var isStarted = false
        var isStopped = false
        /// Whether the listener holds a connection that LISTENs now: while it does not, notifications are lost.
        var isListening = false

        /// The generation a waiter for `topic` compares with (the overall one for nil).
        func generation(for topic: Int64?) -> UInt64 {
            guard let topic else { return generation }
            return max(topicGenerations[topic] ?? 0, everyTopicGeneration)
        }
    }

    private let state = Mutex(State())

    init(url: String, channel: String, logger: Logger, topics: (@Sendable (String) -> [Int64]?)? = nil) {
        self.url = url
        self.channel = channel
        self.logger = logger
        self.topics = topics
    }

    /// The generation of `topic`, or with nil the overall one.
    func currentGeneration(for topic: Int64? = nil) -> UInt64 {
        state.withLock { $0.generation(for: topic) }
    }

    var waiterCount: Int {
        state.withLock { $0.waiters.count }
    }

    var isStopped: Bool {
        state.withLock { $0.isStopped }
    }

    var isListening: Bool {
        get { state.withLock { $0.isListening } }
        set { state.withLock { $0.isListening = newValue } }
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
    func add(
        id: UInt64, after seen: UInt64, topic: Int64?, deadline: ContinuousClock.Instant,
        continuation: CheckedContinuation<UInt64, Never>
    ) {
        let immediate: UInt64? = state.withLock { state in
            let current = state.generation(for: topic)
            if current > seen || state.isStopped || Task.isCancelled { return current }
            state.waiters[id] = Waiter(deadline: deadline, topic: topic, continuation: continuation)
            return nil
        }
        if let immediate { continuation.resume(returning: immediate) }
    }

    /// Resumes one waiter early (its task was cancelled); nothing when it already ended.
    func resume(id: UInt64) {
        let ended = state.withLock { state in
            state.waiters.removeValue(forKey: id).map { ($0, state.generation(for: $0.topic)) }
        }
        if let ended { ended.0.continuation.resume(returning: ended.1) }
    }

    /// Counts a notification (or a fresh LISTEN) for every topic and resumes every waiter.
    func bumpGeneration() {
        bump(topics: nil)
    }

    /// Counts a notification for `topics` (nil: every topic) and resumes the waiters it concerns: those of
    /// these topics and those waiting for any notification.
    func bump(topics: [Int64]?) {
        let (woken, generation) = state.withLock { state in
            state.generation += 1
            let generation = state.generation
            guard let topics else {
                state.everyTopicGeneration = generation
                defer { state.waiters.removeAll() }
                return (Array(state.waiters.values), generation)
            }
            for topic in topics { state.topicGenerations[topic] = generation }
            let ids = state.waiters.filter { $0.value.topic.map(topics.contains) ?? true }.keys
            return (ids.compactMap { state.waiters.removeValue(forKey: $0) }, generation)
        }
        // Resumed outside the lock: a resumed task may call straight back into `add`.
        for waiter in woken { waiter.continuation.resume(returning: generation) }
    }

    /// A notification's payload arrived: wakes the topics it names, or everyone.
    func received(payload: String) {
        guard let topics else { return bumpGeneration() }
        bump(topics: topics(payload))
    }

    /// Resumes the waiters whose deadline passed; returns how long until the next deadline, at most one tick.
    func expireWaiters(now: ContinuousClock.Instant = .now) -> Duration {
        let (expired, next) = state.withLock { state in
            let expired = state.waiters.filter { $0.value.deadline <= now }
            for id in expired.keys { state.waiters.removeValue(forKey: id) }
            let next = state.waiters.values.map(\.deadline).min()
            return (expired.values.map { ($0, state.generation(for: $0.topic)) }, next)
        }
        for (waiter, generation) in expired { waiter.continuation.resume(returning: generation) }
        guard let next else { return Self.tick }
        return max(.zero, min(Self.tick, next - now))
    }

    /// Marks the listener stopped and resumes every waiter; the thread notices within one tick.
    func stop() {
        let woken = state.withLock { state in
            state.isStopped = true
            defer { state.waiters.removeAll() }
            return state.waiters.values.map { ($0, state.generation(for: $0.topic)) }
        }
        for (waiter, generation) in woken { waiter.continuation.resume(returning: generation) }
    }
}
