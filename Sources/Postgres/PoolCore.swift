import DequeModule
import Foundation
import Sockets
import Logging

/// The pool's shared state and threads; see the design note in ConnectionPool.swift.
// @unchecked Sendable: `jobs`, `inUse` and `isClosed` are guarded by `condition`'s lock;
// everything else is immutable after init.
final class PoolCore: @unchecked Sendable {
    let configuration: PoolConfiguration
    let logger: Logger
    private let condition = NSCondition()
    private var jobs: Deque<PoolJob> = []  // guarded by condition
    private var inUse = 0  // guarded by condition
    private var isClosed = false  // guarded by condition
    private let workersExited = DispatchGroup()

    init(configuration: PoolConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    func start() {
        for number in 0..<configuration.size {
            workersExited.enter()
            let worker = PoolWorker(core: self)
            let thread = Thread { [self] in
                worker.run()
                workersExited.leave()
            }
            thread.name = "postgres-pool-\(number)"
            thread.start()
        }
        let sweeper = Thread { [self] in sweep() }
        sweeper.name = "postgres-pool-sweeper"
        sweeper.start()
    }

    func enqueue(_ job: PoolJob) {
        condition.lock()
        guard !isClosed else {
            condition.unlock()
            return job.fail(PostgresError(kind: .poolClosed, message: "the connection pool is shut down"))
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Blocks a worker until there is a job; nil once the pool is closed.
    func nextJob() -> PoolJob? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !isClosed { condition.wait() }
        guard !isClosed, let job = jobs.popFirst() else { return nil }
        inUse += 1
        return job
    }

    func jobFinished() {
        condition.withLock { inUse -= 1 }
    }

    var statistics: (size: Int, inUse: Int, waiting: Int) {
        condition.withLock { (configuration.size, inUse, jobs.count) }
    }

    /// Closes the pool; waiting jobs fail with `.poolClosed`, each worker closes its connection as it exits.
    func shutdown(waitForWorkers: Bool = true) {
        let waiting: Deque<PoolJob> = condition.withLock {
            isClosed = true
            condition.broadcast()
            defer { jobs.removeAll() }
            return jobs
        }
        for job in waiting {
            job.fail(PostgresError(kind: .poolClosed, message: "the connection pool shut down before the job ran"))
        }
        if waitForWorkers { workersExited.wait() }
    }

    /// The sweeper thread: fails jobs that waited longer than the checkout timeout, until shutdown.
    private func sweep() {
        let timeout = configuration.checkoutTimeout
        // A tenth of the timeout keeps the error prompt without waking more than ~10 times a second.
        let interval = min(max(timeout / 10, .milliseconds(5)), .milliseconds(100))
        while true {
            Thread.sleep(forTimeInterval: interval.timeInterval)
            let now = ContinuousClock.now
            let expired: [PoolJob]? = condition.withLock {
                guard !isClosed else { return nil }
                var expired: [PoolJob] = []
                // The queue is in arrival order, so the oldest jobs are at the front.
                while let first = jobs.first, now - first.enqueuedAt >= timeout {
                    expired.append(jobs.removeFirst())
                }
                return expired
            }
            guard let expired else { return }
            for job in expired {
                job.fail(PostgresError(kind: .poolTimeout, message: "no database connection became free within \(timeout)"))
            }
        }
    }
}
