import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// What the blocking `Connection` and the event loop's non-blocking `LoopConnection` both need from libpq.
enum LibPQ {
    /// Calls `body` with a query's parameter count and values (NULL for SQL NULL) as C strings, valid
    /// during the call only: libpq copies them into its output buffer.
    static func withBindings<T>(_ query: Query, _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> T) -> T {
        let copies = query.bindings.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) }
        return pointers.withUnsafeBufferPointer { body(Int32($0.count), $0.baseAddress) }
    }

    /// Whether a finished result reports success; COPY and pipeline results are never expected.
    static func isSuccess(_ result: OpaquePointer) -> Bool {
        let status = PQresultStatus(result)
        return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY
    }

    /// The error an unsuccessful result, or no result at all, stands for on `handle`; the result is not freed.
    static func error(for result: OpaquePointer?, on handle: OpaquePointer?, sql: String) -> PostgresError {
        let lost = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
        guard let result else {
            // libpq returns no result only when out of memory or the connection is unusable.
            let message = handle.flatMap { PostgresError.trimmed(PQerrorMessage($0)) }
            return PostgresError(kind: lost ? .connectionLost : .protocolViolation, message: message, sql: sql)
        }
        switch PQresultStatus(result) {
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR:
            return PostgresError(result: result, kind: lost ? .connectionLost : .server, sql: sql)
        default:
            return PostgresError(kind: .protocolViolation, message: "unexpected result status", sql: sql)
        }
    }
}
