import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client half of budget-server's sync protocol (docs/sync.md, docs/budgetsync.md): pulls the
/// change feed into a `SyncStore` and pushes its outbox in atomic batches.
public actor SyncClient {
    /// How the client talks to one server.
    public struct Configuration: Sendable {
        public var baseURL: URL
        /// The collections this client keeps: pulls apply their changes only (others in the feed are
        /// skipped), and a resync after `410` reloads their lists, so both leave the store the same.
        public var collections: [String]
        /// Prefix of every idempotency key this client makes; keys are unique per ledger, so each device
        /// needs its own.
        public var deviceID: String
        /// Changes asked for per `/changes` page (the server allows at most 1000).
        public var pageLimit = 100
        /// Operations per `POST /batch`; the server's `--batch-limit` (100 by default).
        public var batchLimit = 100
        /// Seconds a live pull waits on the server for the next change (at most 60).
        public var longPollSeconds = 30
        public var conflictPolicy: ConflictPolicy = .serverWins
        public var rejectionPolicy: RejectionPolicy = .stop
        public var retry = RetryPolicy()
        /// Sent with every request, such as `Authorization: Bearer …`.
        public var headers: [String: String] = [:]

        public init(baseURL: URL, collections: [String], deviceID: String) {
            self.baseURL = baseURL
            self.collections = collections
            self.deviceID = deviceID
        }

        /// A client of one ledger on a server with users (docs/households.md): every request goes to
        /// `server/ledgers/{ledger}/…` with `Authorization: Bearer <token>`, so the feed, the pushes and the
        /// idempotency keys are that ledger's alone.
        public init(server: URL, ledger: Int64, token: String, collections: [String], deviceID: String) {
            self.init(
                baseURL: server.appendingPathComponent("ledgers").appendingPathComponent(String(ledger)),
                collections: collections, deviceID: deviceID)
            headers["Authorization"] = "Bearer \(token)"
        }
    }

    public nonisolated let events: AsyncStream<SyncEvent>
    let eventSink: AsyncStream<SyncEvent>.Continuation
    let configuration: Configuration
    let store: any SyncStore
    let transport: any HTTPTransport
    /// Counts the feed pages and resyncs written to the store, so `refresh` can tell one landed during its fetch.
    var pagesApplied = 0

    public init(configuration: Configuration, store: any SyncStore, transport: any HTTPTransport = URLSessionTransport()) {
        self.configuration = configuration
        self.store = store
        self.transport = transport
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    deinit {
        eventSink.finish()
    }

    /// Follows `/changes` from the stored cursor until the feed has nothing more, applying each page
    /// and its cursor together; a `410` resyncs from the lists first. Answers what it brought.
    @discardableResult
    public func pull() async throws -> PullSummary {
        try await pull(live: false)
    }

    /// With `live`, keeps long-polling (`wait`) after catching up, until the calling task is cancelled;
    /// cancellation cancels the request in flight and ends the pull at once with `CancellationError`.
    @discardableResult
    public func pull(live: Bool) async throws -> PullSummary {
        var cursor = try await store.cursor() ?? 0
        var summary = PullSummary(changes: 0, resyncedRecords: nil, cursor: cursor)
        var isCaughtUp = false
        let kept = Set(configuration.collections)
        while true {
            try Task.checkCancellation()
            var query = "since=\(cursor)&limit=\(configuration.pageLimit)"
            if live && isCaughtUp { query += "&wait=\(configuration.longPollSeconds)" }
            let answer = try await sendRetrying(
                "GET", "/changes?" + query, body: nil,
                timeout: TimeInterval(configuration.longPollSeconds + 30))
            switch answer.status {
            case 200:
                let page = try ChangePage(parsing: answer.body)
                let changes = page.changes.filter { kept.contains($0.collection) }
                pagesApplied += 1
                try await store.apply(changes, cursor: page.lastSeq)
                cursor = page.lastSeq
                summary.changes += changes.count
                summary.cursor = cursor
                if !changes.isEmpty { eventSink.yield(.pulled(changes: changes.count, cursor: cursor)) }
                if !page.hasMore {
                    if !live { eventSink.yield(.idle); return summary }
                    if !isCaughtUp { eventSink.yield(.idle) }
                    isCaughtUp = true
                }
            case 410 where Problem(answer.body).type == "urn:budget-server:problem:resync-required":
                let resynced = try await resync()
                cursor = resynced.cursor
                summary.resyncedRecords = (summary.resyncedRecords ?? 0) + resynced.records
                summary.cursor = cursor
                isCaughtUp = false
            default:
                throw SyncError.rejected(status: answer.status, operation: nil, problem: Problem(answer.body).summary)
            }
        }
    }

    /// Loads every configured collection's list, replaces the local records with them, and answers the
    /// smallest `X-Sync-Seq` seen: following the feed from there misses nothing (docs/sync.md).
    func resync() async throws -> (records: Int, cursor: Int) {
        var records: [Record] = []
        var position: Int?
        for collection in configuration.collections {
            let answer = try await sendRetrying("GET", "/" + collection, body: nil)
            // A json-server collection nobody wrote to yet does not exist: it is empty.
            if answer.status == 404 { continue }
            guard answer.status == 200 else {
                throw SyncError.rejected(status: answer.status, operation: nil, problem: Problem(answer.body).summary)
            }
            guard let seq = answer.headers["x-sync-seq"].flatMap(Int.init) else {
                throw SyncError.malformedAnswer("GET /\(collection) without X-Sync-Seq")
            }
            position = min(position ?? seq, seq)
            let bytes = [UInt8](answer.body)
            for range in try JSONScanner.elements(of: bytes, in: bytes.indices) {
                records.append(try Record(collection: collection, json: Data(bytes[range])))
            }
        }
        let cursor = position ?? 0
        pagesApplied += 1
        try await store.replaceAll(with: records, cursor: cursor)
        eventSink.yield(.resynced(records: records.count, cursor: cursor))
        return (records.count, cursor)
    }

    /// Fetches one record and writes the server's version (or its absence) into the store, such as a
    /// category whose `spent` moved with a transaction write, which the feed does not list again
    /// (docs/sync.md). Answers the record and its `ETag`, nil if the server has no such record.
    ///
    /// A page the feed delivers while the fetch is in flight may hold an older version of the record
    /// and moves the cursor past it; writing the fetched version after it is safe, but a version
    /// fetched before that page must not land on top of a newer one, so the fetch is repeated.
    @discardableResult
    public func refresh(collection: String, id: String) async throws -> (record: Record, etag: String?)? {
        for _ in 1...3 {
            let pagesBefore = pagesApplied
            let current = try await fetch(collection: collection, id: id)
            guard pagesApplied == pagesBefore else { continue }
            let kind: Change.Kind = if let current { .upsert(current.record) } else { .delete }
            try await store.apply([Change(collection: collection, id: id, kind: kind, seq: nil, version: nil)], cursor: nil)
            return current
        }
        throw SyncError.busy("the feed kept delivering while \(collection)/\(id) was being refreshed")
    }

    /// The server's current version of one record and its `ETag`, or nil if it does not exist.
    public func fetch(collection: String, id: String) async throws -> (record: Record, etag: String?)? {
        let answer = try await sendRetrying("GET", Record.path(collection: collection, id: id), body: nil)
        switch answer.status {
        case 200: return (Record(collection: collection, id: id, json: answer.body, etag: answer.headers["etag"]), answer.headers["etag"])
        case 404: return nil
        default: throw SyncError.rejected(status: answer.status, operation: nil, problem: Problem(answer.body).summary)
        }
    }
}

/// What a `pull` brought into the store.
public struct PullSummary: Sendable, Hashable, CustomStringConvertible {
    /// Changes applied from the feed: upserts and tombstones.
    public var changes: Int
    /// Records loaded from the lists by a resync after `410`; nil if none was needed.
    public var resyncedRecords: Int?
    /// The feed position the store reflects now.
    public var cursor: Int

    /// `3 changes, cursor 7`, or `resync of 5 records, then 2 changes, cursor 9`.
    public var description: String {
        let changes = "\(changes) change\(changes == 1 ? "" : "s"), cursor \(cursor)"
        return resyncedRecords.map { "resync of \($0) records, then \(changes)" } ?? changes
    }
}

/// What the client is doing, for a progress display.
public enum SyncEvent: Sendable, Hashable {
    case pulled(changes: Int, cursor: Int)
    case resynced(records: Int, cursor: Int)
    /// A batch was acknowledged; `replayed` of its operations had already been applied (a lost answer).
    case pushed(operations: Int, replayed: Int)
    case conflict(key: String, resolution: ConflictResolution)
    /// The server refused a write for good and the rejection policy set it aside.
    case rejected(key: String, status: Int)
    /// The server was unavailable; the client waits `delay` and sends the same request again.
    case retrying(attempt: Int, delay: Duration)
    /// Caught up with the feed.
    case idle
}

/// The `type`, `title` and `detail` of an RFC 9457 problem answer, and its `operation` for a batch.
struct Problem {
    var object: [String: Any]

    init(_ body: Data) {
        object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    var type: String? { object["type"] as? String }
    var operation: Int? { object["operation"] as? Int }
    var summary: String { [object["title"], object["detail"]].compactMap { $0 as? String }.joined(separator: ": ") }
}
