import Postgres

/// The budget API's view of PostgreSQL: run a query and take the JSON text PostgreSQL rendered.
///
/// Responses are built by `json_build_object`/`json_agg` in SQL, so Swift passes the bytes through instead
/// of decoding and re-encoding them; `numeric(14,2)` keeps its two decimals on the way.
struct Database: Sendable {
    let pool: ConnectionPool

    /// The first column of the first row, as bytes; nil when the query returned no row.
    func json(_ query: Query) async throws -> [UInt8]? {
        try await pool.withConnection { connection in
            try connection.query(query).firstJSON()
        }
    }

    /// Runs `body` in one database transaction: all of it commits or none of it does.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await pool.withTransaction(body)
    }
}

extension QueryResult {
    /// The first column of the first row as bytes, or nil for no row.
    func firstJSON() -> [UInt8]? {
        count > 0 ? self[0].bytes(at: 0) : nil
    }
}

extension Connection {
    /// The first column of the first row of `query`, as bytes.
    func json(_ query: Query) throws -> [UInt8]? {
        try self.query(query).firstJSON()
    }
}
