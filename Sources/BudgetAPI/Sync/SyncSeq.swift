import HTTPServer
import Postgres

// X-Sync-Seq: every GET of a list or record says which change feed position its data reflects. The
// position is read by the same statement as the data, so both come from one snapshot: every change up to
// it is in the data, and every change not in the data is stamped above it later. A change may be in the
// data before the sequencer stamped it; then following /changes from this number shows that record again,
// at the same version: a repeat, never a miss (docs/change-feed.md).

extension Response {
    static let syncSeqHeader = "X-Sync-Seq"

    /// The change feed position this answer's data reflects.
    var syncSeq: Int64? {
        get { headers[Self.syncSeqHeader].flatMap { Int64($0) } }
        set {
            if let newValue { headers.replaceOrAdd(Self.syncSeqHeader, String(newValue)) } else { headers.remove(Self.syncSeqHeader) }
        }
    }

    /// A JSON record read with its feed position, as `Connection.snapshotJSON` answers it.
    static func json(_ snapshot: SnapshotJSON) -> Response {
        var response = Response.json(snapshot.json)
        response.syncSeq = snapshot.syncSeq
        return response
    }
}

/// JSON read by one statement together with the change feed position of that statement's snapshot.
struct SnapshotJSON: Sendable {
    let json: [UInt8]
    let syncSeq: Int64
}

extension SnapshotJSON {
    /// `query`, whose one column is JSON, selected with the feed position from the same snapshot.
    static func statement(_ query: Query, ledger: LedgerID) -> Query {
        "SELECT snapshot.json, \(ChangeFeedQueries.position(ledger)) FROM (\(query)) AS snapshot(json)"
    }

    /// The first row of `statement`'s result; nil when it has none.
    init?(_ result: QueryResult) throws {
        guard result.count > 0 else { return nil }
        self.init(json: result[0].bytes(at: 0) ?? [], syncSeq: try result[0].decode(Int64.self, at: 1))
    }
}

/// How one record is read: plain columns that Swift renders, or one column of JSON that SQL rendered.
enum RecordRead: Sendable {
    /// A query selecting the record's `PlainRecord.columns`, no row when there is no such record.
    case plain(Query, PlainRecord)
    /// A query whose one column is the record's JSON (`_embed`/`_expand`, generic documents).
    case rendered(Query)
}

extension SnapshotJSON {
    /// `read`'s query with the feed position from the same snapshot: last for rendered JSON (see
    /// `statement(_:)`), first for plain columns, which follow it.
    static func statement(_ read: RecordRead, ledger: LedgerID) -> Query {
        switch read {
        case .plain(let query, _): "SELECT \(ChangeFeedQueries.position(ledger)), snapshot.* FROM (\(query)) AS snapshot"
        case .rendered(let query): statement(query, ledger: ledger)
        }
    }

    /// The record in `statement(read)`'s first row, rendered; nil when it has none.
    init?(_ result: QueryResult, read: RecordRead) throws {
        guard case .plain(_, let record) = read else {
            try self.init(result)
            return
        }
        guard result.count > 0 else { return nil }
        self.init(json: record.json(result[0], from: 1), syncSeq: try result[0].decode(Int64.self, at: 0))
    }
}

extension Connection {
    /// The first column of the first row `query` selects, with the ledger's feed position from the same
    /// snapshot; nil when the query selects no row.
    func snapshotJSON(_ query: Query, ledger: LedgerID) throws -> SnapshotJSON? {
        try SnapshotJSON(self.query(SnapshotJSON.statement(query, ledger: ledger)))
    }
}

extension Database {
    /// See `Connection.snapshotJSON`.
    func snapshotJSON(_ query: Query) async throws -> SnapshotJSON? {
        try SnapshotJSON(await self.query(SnapshotJSON.statement(query, ledger: ledger)))
    }

    /// One record as JSON with the change feed position of the same snapshot; nil when there is no such record.
    func snapshotJSON(_ read: RecordRead) async throws -> SnapshotJSON? {
        try SnapshotJSON(await query(SnapshotJSON.statement(read, ledger: ledger)), read: read)
    }
}
