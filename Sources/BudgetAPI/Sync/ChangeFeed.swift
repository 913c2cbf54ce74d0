import HTTPServer
import Postgres

// How the feed has no gaps, and what it costs (docs/change-feed.md has the whole argument)
//
// Writers record their change with seq NULL and take no lock. A sequencer run (advance_change_feed() in
// migrations/0011, called by every process's `BackgroundDrain`) is the only thing that takes the feed's
// advisory lock: in a snapshot taken after the lock it stamps every committed, unstamped change with the
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

/// One answer of the change feed: changes already rendered by PostgreSQL, and where to continue.
struct ChangePage: Sendable {
    /// Each change's JSON object, in seq order.
    var changes: [[UInt8]]
    /// Where the client continues: the last change's seq while there is more, else the feed position.
    var lastSeq: Int64
    var hasMore: Bool
    /// The largest seq of a purged tombstone; a `since` below it has missed deletions.
    var purgedSeq: Int64
    var isCollectionKnown: Bool

    /// `{"changes":[…],"lastSeq":N,"hasMore":B}`, the bytes PostgreSQL rendered passed through.
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

    /// The member PostgreSQL renders last in an upsert. Its first occurrence is the member itself: a
    /// quote inside a JSON string is always escaped, so no string can hold `,"data":`.
    private static let dataMember = Array(#","data":"#.utf8)
    /// A record's GET carries none of the list-only headers a tag also covers (X-Total-Count).
    private static let recordHeaderValues = BudgetApp.representationHeaders.map { _ in [String]() }
    private static let tagOpening = Array(#","etag":"\""#.utf8)
    private static let tagClosing = Array(#"\"""#.utf8)

    /// An upsert with `"etag"` added before its `data`: the tag the record's own GET answers for those
    /// same bytes (docs/sync.md), so an app can send `If-Match` for a version it only saw in the feed.
    /// Computed here rather than in SQL: hashing costs our CPU, which multiplies, not PostgreSQL's.
    static func taggingData(of change: [UInt8]) -> [UInt8] {
        guard let member = firstDataMember(in: change), change.last == UInt8(ascii: "}") else { return change }
        let tag = EntityTag.strong(body: change[(member + dataMember.count)..<(change.count - 1)], headerValues: recordHeaderValues)
        var tagged: [UInt8] = []
        tagged.reserveCapacity(change.count + tagOpening.count + 32 + tagClosing.count)
        tagged.append(contentsOf: change[..<member])
        tagged.append(contentsOf: tagOpening)
        tagged.append(contentsOf: tag.opaqueTag.utf8)
        tagged.append(contentsOf: tagClosing)
        tagged.append(contentsOf: change[member...])
        return tagged
    }

    /// Where `,"data":` starts; a plain scan of the short prefix before it.
    private static func firstDataMember(in change: [UInt8]) -> Int? {
        change.withUnsafeBufferPointer { bytes in
            let pattern = dataMember
            guard bytes.count >= pattern.count else { return nil }
            for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
                if (1..<pattern.count).allSatisfy({ bytes[start + $0] == pattern[$0] }) { return start }
            }
            return nil
        }
    }

    /// The changes after `request.since` (at most `request.limit`), answered at once.
    func page(for request: ChangeFeedRequest) async throws -> ChangePage {
        let query = ChangeFeedQueries.page(since: request.since, limit: request.limit, collection: request.collection)
        // One statement: on the event loop's own connection, outside a request transaction.
        let result = try await database.query(query)
        let first = result[0]  // the state row is always there; the LEFT JOIN keeps it
        var changes: [[UInt8]] = []
        var seqs: [Int64] = []
        for row in result {
            guard let seq = try row.decode(Int64?.self, at: 3), let change = row.bytes(at: 4) else { continue }
            seqs.append(seq)
            changes.append(Self.taggingData(of: change))
        }
        let hasMore = changes.count > request.limit
        if hasMore {
            changes.removeLast()
            seqs.removeLast()
        }
        // On the last page the snapshot holds nothing newer (for this filter) up to the position, and
        // later commits get larger seqs, so the client may jump there: a filtered reader skips the
        // other collections' seqs, and a full read from 0 lands past the purge horizon.
        let position = try first.decode(Int64.self, at: 1)
        return ChangePage(
            changes: changes,
            lastSeq: hasMore ? seqs[seqs.count - 1] : max(seqs.last ?? 0, position),
            hasMore: hasMore,
            purgedSeq: try first.decode(Int64.self, at: 0),
            isCollectionKnown: try first.decode(Bool.self, at: 2))
    }
}
