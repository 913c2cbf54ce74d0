import Postgres

/// Turns database errors into the whole story for the operator running the command.
///
/// Clients only ever see a redacted `PostgresError.description`; the person who started the server
/// owns the database and needs the SQLSTATE and libpq's message to fix a wrong URL or a broken migration.
struct OperatorError: Error, CustomStringConvertible {
    let description: String

    static func explaining<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError {
            throw OperatorError(description: error.debugDescription)
        }
    }
}
