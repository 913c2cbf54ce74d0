import Postgres

/// One raw libpq session kept open across awaits, for holding a transaction (and its locks) while the
/// servers under test run. Each call blocks a thread of its own, never the cooperative pool.
// @unchecked Sendable: the connection is used by one call at a time, each awaited before the next starts.
public final class HeldDatabaseSession: @unchecked Sendable {
    private let connection: Connection

    private init(_ connection: Connection) {
        self.connection = connection
    }

    public static func open(_ url: String) async throws -> HeldDatabaseSession {
        try await runOffCooperativePool { HeldDatabaseSession(try Connection.connect(to: url)) }
    }

    /// Runs one or more statements (simple query protocol, so `BEGIN; LOCK …` works).
    public func execute(_ script: String) async throws {
        try await runOffCooperativePool { [self] in try connection.execute(script: script) }
    }

    public func close() async {
        _ = try? await runOffCooperativePool { [self] in connection.close() }
    }
}
