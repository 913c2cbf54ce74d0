/// The prepared statements of one connection, by SQL text: the one cache both drivers use
/// (`Connection` on the pool's threads, `LoopConnection` on an event loop).
///
/// Each text is prepared once, on first use, under a name never reused. Beyond `capacity` texts, further
/// ones run unprepared rather than evicting an older one: an eviction would cost a `DEALLOCATE` round trip,
/// and only query builders that produce many distinct texts (the list language) ever get there.
struct StatementCache {
    static let capacity = 256

    /// How to run a text.
    enum Plan: Equatable {
        /// Prepared already under this name.
        case execute(name: String)
        /// Prepare it under this name first, then call `prepared(_:as:)`.
        case prepare(name: String)
        /// The cache is full: send the text with its parameters, unprepared.
        case unprepared
    }

    private var names: [String: String] = [:]
    private var nextNumber = 0

    mutating func plan(for sql: String) -> Plan {
        if let name = names[sql] { return .execute(name: name) }
        guard names.count < Self.capacity else { return .unprepared }
        nextNumber += 1
        return .prepare(name: "budget_\(nextNumber)")
    }

    mutating func prepared(_ sql: String, as name: String) {
        names[sql] = name
    }

    /// Drops `sql`, answering the name it had, so that its next use prepares it again.
    @discardableResult
    mutating func forget(_ sql: String) -> String? {
        names.removeValue(forKey: sql)
    }

    /// Forgets everything, as when the connection closes.
    mutating func removeAll() {
        names.removeAll()
    }

    /// Whether running a cached statement failed only because the statement went stale: the schema changed
    /// under it ("cached plan must not change result type") or it vanished (`DISCARD ALL`). Prepared afresh,
    /// it runs once more.
    static func isStale(_ error: PostgresError) -> Bool {
        error.sqlState == .featureNotSupported || error.sqlState == .invalidStatementName
    }
}
