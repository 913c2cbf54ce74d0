import HTTPServer
import Logging
import Postgres

/// `GET /changes` (docs/sync.md): the change feed, with paging, a collection filter and long-polling.
struct SyncRoutes: Sendable {
    /// Removes tombstones older than the retention window (see PeriodicPurge for why no timer).
    let purger: PeriodicPurge
    /// Wakes long-polls when any server process stamps changes (the NOTIFY after each batch), per ledger:
    /// one ledger's writes wake no other ledger's long-polls (`ChangeNotice`).
    let notifications: Notifications
    /// This process's sequencer: stamps committed changes with their seqs (docs/change-feed.md).
    let sequencer: BackgroundDrain

    /// The channel every process's sequencer notifies once per stamped batch.
    static let channel = "budget_changes"
    /// How long `GET /changes` waits for the sequencer before it answers 503: twice the pool's checkout
    /// timeout (10 s with the default `--pool-timeout`). A run takes a few milliseconds, so only a database in
    /// trouble makes it wait this long; a test's server, which waits longer for connections on a loaded
    /// machine, waits longer for the sequencer too.
    let catchUpTimeout: Duration
    /// The least time between two sequencer runs of this process: under a stream of writes each run
    /// stamps what committed meanwhile, so its commit and its NOTIFY are shared (docs/change-feed.md).
    static let sequencerPacing = Duration.milliseconds(5)
    /// How often the sequencer vacuums `change_pending` while it has work (ChangeFeedQueries.pendingMaintenance):
    /// every run scans the table, so its dead rows should not pile up for long.
    static let pendingMaintenanceInterval = Duration.milliseconds(250)

    init(pool: ConnectionPool, tombstoneRetention: Duration, logger: Logger) {
        catchUpTimeout = pool.configuration.checkoutTimeout * 2
        // A window shorter than an hour (tests, a tiny --tombstone-retention) purges that much more often.
        purger = PeriodicPurge(
            statement: ChangeFeedQueries.purge(retention: tombstoneRetention),
            interval: min(.seconds(3600), tombstoneRetention))
        let notifications = Notifications(
            url: pool.configuration.url, channel: Self.channel, logger: logger, topics: ChangeNotice.ledgers(in:))
        self.notifications = notifications
        // Stamped here means long-polls of this process in the ledgers the runs moved may look again at once,
        // before the NOTIFY arrives.
        sequencer = BackgroundDrain(
            url: pool.configuration.url, statement: ChangeFeedQueries.advance, batchSize: ChangeFeedQueries.batchLimit,
            name: "change-sequencer", minimumInterval: Self.sequencerPacing,
            maintenance: ChangeFeedQueries.pendingMaintenance, maintenanceInterval: Self.pendingMaintenanceInterval,
            logger: logger, onProgress: { payloads in Self.wake(notifications, for: payloads) })
    }

    /// Wakes this process's long-polls of the ledgers the sequencer runs' payloads name (all for one it
    /// cannot read, or when the runs named none).
    static func wake(_ notifications: Notifications, for payloads: [String]) {
        var ledgers: Set<Int64> = []
        for payload in payloads {
            guard let named = ChangeNotice.ledgers(in: payload) else { return notifications.signal() }
            ledgers.formUnion(named)
        }
        if ledgers.isEmpty { notifications.signal() } else { notifications.signal(topics: Array(ledgers)) }
    }

    func register(in router: inout Router<Database>) {
        router.get("/changes") { request, database in try await changes(request, database: database) }
    }

    func changes(_ request: Request, database: Database) async throws -> Response {
        let feedRequest = try ChangeFeedRequest(request: request)
        // Changes reach the feed a moment after they commit; catching up first means a client always finds
        // its own acknowledged writes here. A page read without it would still be gap-free, only short of
        // the client's own writes, so a sequencer that cannot finish is an outage (503, Retry-After).
        // Before the purge, which removes only stamped tombstones.
        guard await sequencer.catchUp(timeout: catchUpTimeout) else { throw APIError.databaseUnavailable }
        try await purger.purgeIfDue(in: database)
        let deadline = ContinuousClock.now + feedRequest.wait
        while true {
            // Read before looking, so a commit between the look and the wait still wakes us.
            let seen = feedRequest.wait > .zero ? notifications.generation(of: database.ledger.value) : 0
            let page = try await ChangeFeed(database: database).page(for: feedRequest)
            guard page.isCollectionKnown else { throw SyncError.unknownCollection(feedRequest.collection ?? "") }
            // since=0 is a client with nothing yet: every live record is in the log as an upsert, so a
            // purged tombstone cannot concern it.
            if feedRequest.since > 0, feedRequest.since < page.purgedSeq {
                throw SyncError.sinceTooOld(since: feedRequest.since, purgedThrough: page.purgedSeq)
            }
            let remaining = deadline - .now
            guard page.changes.isEmpty, remaining > .zero else { return .json(page.json) }
            // A notification for another collection of this ledger wakes us too; we look again and wait out
            // the rest. Other ledgers' notifications do not.
            _ = await notifications.wait(after: seen, topic: database.ledger.value, timeout: remaining)
            // A client that hung up, or a server shutting down (which stops the notifications), ends the wait
            // with what there is now rather than looking again until the deadline.
            if Task.isCancelled || notifications.isStopped { return .json(page.json) }
        }
    }
}

/// The ways `GET /changes` refuses a request beyond a malformed query, each knowing its problem.
enum SyncError: ProblemConvertible {
    /// `collection` names neither a typed resource nor a generic collection this feed ever saw.
    case unknownCollection(String)
    /// `since` is older than the oldest tombstone still kept, so deletions may have been missed.
    case sinceTooOld(since: Int64, purgedThrough: Int64)

    var problem: Problem {
        switch self {
        case .unknownCollection(let name):
            return Problem(
                .notFound, detail: "there is no collection named \(name) in the change feed",
                errors: [.init(field: "collection", message: "unknown collection")])
        case .sinceTooOld(let since, let purgedThrough):
            // The client cannot catch up from the feed; it must load the lists again (docs/sync.md).
            return Problem(
                .gone,
                detail: "since=\(since) is older than the change feed keeps deletions (tombstones up to seq "
                    + "\(purgedThrough) were purged); resync from the lists: drop local records, load every "
                    + "collection again (or page /changes from since=0, which holds every live record), then "
                    + "follow /changes from there",
                type: "urn:budget-server:problem:resync-required"
            )
        }
    }
}
