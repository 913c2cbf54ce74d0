import Foundation

/// Where an app keeps what sync needs: its records, the feed cursor, and the outbox.
///
/// The data stays the app's: conform a SwiftData or Core Data context, an SQLite file or plain files
/// (`FileSyncStore`). Each method must be durable when it returns, and `apply` and `replaceAll`
/// must be atomic: after a crash the store holds either the old records and cursor or the new ones,
/// never new records with the old cursor or the reverse (docs/budgetsync.md).
public protocol SyncStore: Sendable {
    /// The feed position the stored records reflect; nil before the first pull.
    func cursor() async throws -> Int?
    /// Applies remote changes (upserts and tombstones, by collection and id) and moves the cursor to
    /// `cursor`, all in one transaction. A nil `cursor` leaves it where it is.
    func apply(_ changes: [Change], cursor: Int?) async throws
    /// Replaces every synced record with `records` and sets the cursor: a resync after `410`.
    func replaceAll(with records: [Record], cursor: Int) async throws
    /// The local writes not yet acknowledged by the server, oldest first.
    func pendingOperations() async throws -> [PendingOperation]
    /// Adds a local write at the end of the outbox.
    func appendOperation(_ operation: PendingOperation) async throws
    /// Replaces the queued operation with the same key, keeping its place.
    func updateOperation(_ operation: PendingOperation) async throws
    /// Removes the operations with these keys (the server acknowledged them, or a conflict dropped them).
    func removeOperations(withKeys keys: Set<String>) async throws
}

/// A local write waiting in the outbox: one operation of a `POST /batch` (docs/sync.md).
public struct PendingOperation: Sendable, Hashable, Codable {
    public enum Method: String, Sendable, Codable {
        case post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    /// The `Idempotency-Key`, made once when the write was queued and sent with every attempt.
    public let key: String
    public var method: Method
    public var path: String
    /// The JSON body as text, exactly as the app gave it; nil for `DELETE`.
    public var body: String?
    /// The `ETag` of the version the app edited; the server answers `412` if the record moved on.
    public var ifMatch: String?
    /// The `version` of the record the app edited, when it has one (the budget's own collections): a
    /// `412` where the server's version is still this one means only derived members moved (a
    /// category's `spent`), which is no conflict, so the write is re-sent under the new `ETag`.
    public var baseVersion: Int?

    public init(key: String, method: Method, path: String, body: String?, ifMatch: String?, baseVersion: Int? = nil) {
        self.key = key
        self.method = method
        self.path = path
        self.body = body
        self.ifMatch = ifMatch
        self.baseVersion = baseVersion
    }

    /// The collection and id the write's path names, `/collection/id`; nil for a path like `/categories`.
    var target: (collection: String, id: String)? {
        let segments = path.split(separator: "?", maxSplits: 1)[0].split(separator: "/")
        guard segments.count == 2 else { return nil }
        return (String(segments[0]), String(segments[1]).removingPercentEncoding ?? String(segments[1]))
    }
}
