import CLibPQ
import Glibc
import Sockets

/// One libpq connection: runs queries as cached prepared statements with text-format parameters.
///
/// Not `Sendable`, and its calls block: use it from one thread at a time, which in the server means a
/// `ConnectionPool` worker thread. Every connection is opened with `SessionSettings` (`TimeZone=UTC` and
/// `DateStyle=ISO`, so `Timestamp` and `PostgresDate` always parse the server's output; `jit` off).
public final class Connection {
    /// The libpq handle; nil once closed. Always released with `PQfinish`.
    private(set) var handle: OpaquePointer?
    /// Internal for `pipeline(_:)` (ConnectionPipeline.swift), which prepares through the same cache.
    var statements = StatementCache()

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        close()
    }

    /// Opens a connection from a URL (`postgresql://user@/db?host=/socket/dir`) or a `key=value` conninfo.
    ///
    /// - Parameter statementTimeout: when set, statements running longer are cancelled by the server (57014).
    public static func connect(to url: String, statementTimeout: Duration? = nil) throws -> Connection {
        guard let handle = PQconnectdb(url) else {
            throw PostgresError(kind: .connectionFailed, message: "libpq could not allocate a connection")
        }
        // From here `connection` owns the handle, so PQfinish runs even when connecting failed.
        let connection = Connection(handle: handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(kind: .connectionFailed, message: PostgresError.trimmed(PQerrorMessage(handle)))
        }
        // Notices ("relation already exists, skipping") are not errors; libpq would print them to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        var settings = SessionSettings.statements + " SET client_encoding TO 'UTF8';"
        if let statementTimeout {
            settings += " SET statement_timeout TO \(statementTimeout.wholeMilliseconds);"
        }
        try connection.execute(script: settings)
        return connection
    }

    /// Runs `query` as a prepared statement (prepared on first use of its SQL text) and returns its rows.
    ///
    /// A cached statement that went stale (`StatementCache.isStale`) is prepared afresh and, outside a
    /// transaction, run once more; inside one the error stands, since the transaction has failed anyway.
    @discardableResult
    public func query(_ query: Query) throws -> QueryResult {
        let sql = query.sql
        do {
            return try run(query, sql: sql)
        } catch let error as PostgresError where StatementCache.isStale(error) {
            if let name = statements.forget(sql), let handle, !isTransactionFailed {
                PQclear(PQexec(handle, "DEALLOCATE \(name)"))
            }
            guard !isInTransaction else { throw error }
            return try run(query, sql: sql)
        }
    }

    private func run(_ query: Query, sql: String) throws -> QueryResult {
        try query.checkSendable()
        let handle = try openHandle()
        let plan = statements.plan(for: sql)
        if case .prepare(let name) = plan {
            // Parameter types are left to the server to infer (nil), as with untyped literals.
            try check(PQprepare(handle, name, sql, Int32(query.bindings.count), nil), sql: sql)
            statements.prepared(sql, as: name)
        }
        let result = LibPQ.withBindings(query) { count, values in
            switch plan {
            case .execute(let name), .prepare(let name): PQexecPrepared(handle, name, count, values, nil, nil, query.resultFormat)
            case .unprepared: PQexecParams(handle, sql, count, nil, values, nil, nil, query.resultFormat)
            }
        }
        return try check(result, sql: sql)
    }

    /// Runs `query` and discards its rows.
    public func execute(_ query: Query) throws {
        try self.query(query)
    }

    /// Runs one or more `;`-separated statements with the simple-query protocol (no parameters), e.g. a migration.
    public func execute(script: String) throws {
        try check(PQexec(try openHandle(), script), sql: script)
    }

    /// Whether libpq still counts the connection as up; no syscall, so it misses a backend that went away
    /// while idle (`isHealthy` looks at the socket for that).
    public var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether the connection still works, checked cheaply: a pending EOF or error from the server is read
    /// without blocking (poll with zero timeout, then `PQconsumeInput`) before asking `PQstatus`.
    public var isHealthy: Bool {
        guard isConnected, let handle else { return false }
        // A terminated backend sends an error and then closes; each round reads what has arrived so far.
        for _ in 0..<4 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { break }
            if PQconsumeInput(handle) == 0 { return false }
            while let notification = PQnotifies(handle) { PQfreemem(notification) }
        }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether a transaction is open (or failed and awaiting ROLLBACK) on this connection.
    public var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Whether the open transaction has failed, so only ROLLBACK can follow.
    var isTransactionFailed: Bool {
        handle.map { PQtransactionStatus($0) == PQTRANS_INERROR } ?? false
    }

    /// Closes the connection; later calls throw `.connectionLost`. Safe to call twice.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        statements.removeAll()
    }

    func openHandle() throws -> OpaquePointer {
        guard let handle else { throw PostgresError(kind: .connectionLost, message: "connection is closed") }
        return handle
    }

    /// Wraps a finished `PGresult`, or turns a failed one into a `PostgresError` (freeing it either way).
    @discardableResult
    private func check(_ result: OpaquePointer?, sql: String) throws -> QueryResult {
        guard let result, LibPQ.isSuccess(result) else {
            defer { if let result { PQclear(result) } }
            throw LibPQ.error(for: result, on: handle, sql: sql)
        }
        return QueryResult(taking: result)
    }
}
