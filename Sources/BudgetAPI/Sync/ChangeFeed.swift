import HTTPServer
import JSONText
import Postgres

// How the feed has no gaps, and what it costs (docs/change-feed.md has the whole argument)
//
// Writers append their change to change_pending and take no lock. A sequencer run (advance_change_feed() in
// migrations/0013, called by every process's `BackgroundDrain`) is the only thing that takes the feed's
// advisory lock: in a snapshot taken after the lock it moves every committed change into the log with the
// next dense seqs, and it releases the lock only once its commit is visible. So any snapshot holds the
// stamps of a prefix of the runs: one that shows seq N shows every seq up to N, and whatever it does not
// show yet is stamped later with a larger seq. Reading the feed therefore needs nothing clever: one
// statement (one snapshot) takes the changes with `seq > since` in seq order, and a client that passes
// `lastSeq` back as `since` can never skip a change that committed "late".
//
// The price: a change reaches the feed one sequencer run after its commit, a few milliseconds. `GET
// /changes` catches the sequencer up before it reads, so a client finds its own acknowledged writes.
// Writers never wait for one another, and a long transaction holds back only its own changes.
//
// Each record is one row of the log (its latest change), so a page holds each record at most once;
// a record changed again after a client read it simply reappears later with a higher seq.

/// One answer of the change feed: its changes rendered as JSON, and where to continue.
struct ChangePage: Sendable {
    /// Each change's JSON object, in seq order.
    var changes: [[UInt8]]
    /// Where the client continues: the last change's seq while there is more, else the feed position.
    var lastSeq: Int64
    var hasMore: Bool
    /// The largest seq of a purged tombstone; a `since` below it has missed deletions.
    var purgedSeq: Int64
    var isCollectionKnown: Bool

    /// `{"changes":[…],"lastSeq":N,"hasMore":B}`.
    var json: [UInt8] {
        var body = Array(#"{"changes":["#.utf8)
        for (index, change) in changes.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: change)
        }
        body.append(contentsOf: #"],"lastSeq":\#(lastSeq),"hasMore":\#(hasMore)}"#.utf8)
        return body
    }
}

/// Reads pages of the change feed from PostgreSQL.
struct ChangeFeed: Sendable {
    let database: Database

    /// A record's GET carries none of the list-only headers a tag also covers (X-Total-Count).
    private static let recordHeaderValues = BudgetApp.representationHeaders.map { _ in [String]() }
    /// Each typed resource's collection name and record, in `TypedResources.all` order (the page's columns).
    private static let typed = TypedResources.all.map { (name: Array($0.collection.utf8), record: $0.shape.record) }
    private static let upsert = Array("upsert".utf8)

    /// Change row `row` as `{"seq":…,"collection":…,"id":…,"op":…,"version":…,"etag":…,"data":…}`, a
    /// tombstone without `etag` and `data`. `data` is the record exactly as its own GET renders it, and
    /// `etag` the tag that GET answers for those bytes (docs/sync.md), so an app can send `If-Match` for a
    /// version it only saw in the feed. Written here, not by PostgreSQL: server processes multiply, it does not.
    static func render(_ row: Row) -> [UInt8] {
        typealias Column = ChangeFeedQueries.Column
        var change: [UInt8] = []
        change.reserveCapacity(384)
        change += #"{"seq":"#.utf8
        row.withBytes(at: Column.seq) { $0.map { change.append(contentsOf: $0) } }
        change += #","collection":"#.utf8
        let collection = row.bytes(at: Column.collection) ?? []
        collection.withUnsafeBytes { JSONQuoting.append(utf8: $0, to: &change) }
        change += #","id":"#.utf8
        row.withBytes(at: Column.id) { $0.map { change.append(contentsOf: $0) } }
        change += #","op":""#.utf8
        let isUpsert = row.withBytes(at: Column.op) { op in
            op.map { change.append(contentsOf: $0) }
            return op?.elementsEqual(upsert) ?? false
        }
        change += #"","version":"#.utf8
        row.withBytes(at: Column.version) { $0.map { change.append(contentsOf: $0) } }
        guard isUpsert else {
            change.append(UInt8(ascii: "}"))
            return change
        }
        let data: [UInt8]
        if let index = typed.firstIndex(where: { $0.name == collection }), row.withBytes(at: Column.typed[index], { $0 != nil }) {
            data = typed[index].record.json(row, from: Column.typed[index])
        } else {
            data = row.bytes(at: Column.document) ?? Array("null".utf8)
        }
        let tag = EntityTag.strong(body: data[...], headerValues: recordHeaderValues)
        change += #","etag":"\""#.utf8
        change += tag.opaqueTag.utf8
        change += #"\"","data":"#.utf8
        change += data
        change.append(UInt8(ascii: "}"))
        return change
    }

    /// The changes after `request.since` (at most `request.limit`, or more to keep a split with its parts),
    /// answered at once.
    func page(for request: ChangeFeedRequest) async throws -> ChangePage {
        let query = ChangeFeedQueries.page(
            since: request.since, limit: request.limit, collection: request.collection, ledger: database.ledger)
        // One statement: on the event loop's own connection, outside a request transaction.
        let result = try await database.query(query)
        let first = result[0]  // the state row is always there; the LEFT JOIN keeps it
        var changes: [[UInt8]] = []
        var lastRead: Int64?
        var hasMore = false
        // The page's last seq: the limit-th change's, or further to keep a split together. The query reads
        // one change more, to tell whether there is more.
        let pageEnd = try first.decode(Int64?.self, at: ChangeFeedQueries.Column.pageEnd)
        for row in result {
            guard let seq = try row.decode(Int64?.self, at: ChangeFeedQueries.Column.seq) else { continue }
            if let pageEnd, seq > pageEnd {
                hasMore = true
                break
            }
            lastRead = seq
            // An upsert whose record is gone: its tombstone is pending and comes later (ChangeFeedQueries.page).
            guard row.withBytes(at: ChangeFeedQueries.Column.version, { $0 != nil }) else { continue }
            changes.append(Self.render(row))
        }
        // On the last page the snapshot holds nothing newer (for this filter) up to the position, and
        // later commits get larger seqs, so the client may jump there: a filtered reader skips the
        // other collections' seqs, and a full read from 0 lands past the purge horizon.
        let position = try first.decode(Int64.self, at: ChangeFeedQueries.Column.position)
        return ChangePage(
            changes: changes,
            lastSeq: hasMore ? (lastRead ?? request.since) : max(lastRead ?? 0, position),
            hasMore: hasMore,
            purgedSeq: try first.decode(Int64.self, at: ChangeFeedQueries.Column.purgedSeq),
            isCollectionKnown: try first.decode(Bool.self, at: ChangeFeedQueries.Column.isKnown))
    }
}
