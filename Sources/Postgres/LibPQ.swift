import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// What the blocking `Connection` and the event loop's non-blocking `LoopConnection` both need from libpq.
enum LibPQ {
    /// Calls `body` with a query's parameter count and values (NULL for SQL NULL) as C strings, valid
    /// during the call only: libpq copies them into its output buffer.
    ///
    /// The values are copied one after another, each with its NUL, into one buffer: one allocation for the
    /// statement where a copy of each value cost one (an atomic batch's statements bind thousands).
    static func withBindings<T>(_ query: Query, _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> T) -> T {
        var storage: [UInt8] = []
        storage.reserveCapacity(query.bindings.reduce(0) { $0 + ($1?.utf8.count ?? 0) + 1 })
        let offsets = query.bindings.map { value -> Int? in
            guard let value else { return nil }
            let offset = storage.count
            storage.append(contentsOf: value.utf8)
            storage.append(0)
            return offset
        }
        return storage.withUnsafeBytes { buffer in
            let start = buffer.baseAddress?.assumingMemoryBound(to: CChar.self)
            let pointers = offsets.map { offset -> UnsafePointer<CChar>? in
                guard let offset, let start else { return nil }
                return UnsafePointer(start + offset)
            }
            return pointers.withUnsafeBufferPointer { body(Int32($0.count), $0.baseAddress) }
        }
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
