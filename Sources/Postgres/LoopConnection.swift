import CLibPQ
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// A statement for a `LoopConnection`, and whoever waits for its rows.
struct LoopStatement: Sendable {
    let query: Query
    let sql: String
    let completion: @Sendable (Result<QueryResult, any Error>) -> Void
    let submittedAt: ContinuousClock.Instant
    /// Set when the statement runs again after its cached prepared statement went stale.
    var isRetry = false
}

/// One libpq connection in non-blocking mode, driven by the readiness callbacks of the reactor (event
/// loop) whose thread it lives on: connecting, sending and reading never block that thread.
///
/// One statement at a time, prepared on first use of its SQL text like `Connection`'s. Session settings
/// (UTC, ISO dates, UTF-8, the statement timeout) travel in the startup packet, so a connection is ready
/// without a round trip of `SET`s. Every method runs on the reactor's thread.
final class LoopConnection {
    enum State {
        case connecting, idle, busy, broken
    }

    private enum Step {
        case preparing(LoopStatement, name: String)
        case executing(LoopStatement, name: String?)
    }

    private let reactor: any Reactor
    private let configuration: PoolConfiguration
    /// Told when the connection can take a statement, and when it broke (the statement in flight has failed).
    var onIdle: (LoopConnection) -> Void = { _ in }
    var onBroken: (LoopConnection) -> Void = { _ in }

    private(set) var state = State.broken
    private(set) var brokenAt: ContinuousClock.Instant?
    private var handle: OpaquePointer?
    private var descriptor: Int32 = -1
    private var isWatchingWritable = false
    private var step: Step?
    /// The result kept while a step's results arrive: the first error, or else the latest.
    private var pendingResult: OpaquePointer?
    private var statements = StatementCache()

    init(reactor: any Reactor, configuration: PoolConfiguration) {
        self.reactor = reactor
        self.configuration = configuration
    }

    deinit {
        close(because: PostgresError(kind: .poolClosed, message: "the connection was closed"))
    }

    // MARK: connecting

    /// Starts connecting without blocking; `onIdle` follows when the connection is ready, `onBroken` if not.
    func connect() {
        precondition(state == .broken, "connect() on a connection that is not broken")
        var options = SessionSettings.startupOptions
        if let timeout = configuration.statementTimeout {
            options += " -c statement_timeout=\(timeout.wholeMilliseconds)"
        }
        // expand_dbname: `dbname` may be a whole URL or conninfo; the later keywords override what it says.
        handle = withCStrings(["dbname", "client_encoding", "options"]) { keywords in
            withCStrings([configuration.url, "UTF8", options]) { values in
                PQconnectStartParams(keywords, values, 1)
            }
        }
        guard let handle, PQstatus(handle) != CONNECTION_BAD else {
            return breakConnection(kind: .connectionFailed)
        }
        // Notices ("relation already exists, skipping") are not errors; libpq would print them to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        state = .connecting
        // libpq's rule: before the first PQconnectPoll, behave as if it had asked to wait for writing.
        watchSocket(for: .writable)
    }

    private func continueConnecting() {
        guard let handle else { return }
        switch PQconnectPoll(handle) {
        case PGRES_POLLING_READING:
            watchSocket(for: .readable)
        case PGRES_POLLING_WRITING:
            watchSocket(for: .writable)
        case PGRES_POLLING_OK:
            guard PQsetnonblocking(handle, 1) == 0 else { return breakConnection(kind: .connectionFailed) }
            watchSocket(for: .readable)
            guard state == .connecting else { return }
            state = .idle
            brokenAt = nil
            onIdle(self)
        default:
            breakConnection(kind: .connectionFailed)
        }
    }

    /// Watches libpq's current socket, which may change while connecting (another host, another address).
    private func watchSocket(for events: Epoll.Events) {
        guard let handle else { return }
        let socket = PQsocket(handle)
        do {
            if socket != descriptor {
                if descriptor >= 0 { reactor.unwatch(descriptor) }
                descriptor = socket
                try reactor.watch(socket, for: events) { [weak self] ready in self?.ready(ready) }
            } else {
                try reactor.rewatch(socket, for: events)
            }
            isWatchingWritable = events.contains(.writable)
        } catch {
            breakConnection(kind: state == .connecting ? .connectionFailed : .connectionLost, message: "\(error)")
        }
    }

    private func ready(_ events: Epoll.Events) {
        switch state {
        case .connecting:
            continueConnecting()
        case .idle, .busy:
            if events.contains(.writable) { flush() }
            if state != .broken, events.contains(.readable) || events.contains(.hangUp) { readResults() }
        case .broken:
            break
        }
    }

    // MARK: statements

    /// Sends `statement`; its completion is called on this thread when the rows (or an error) arrive.
    func start(_ statement: LoopStatement) {
        precondition(state == .idle, "start(_:) on a connection that is not idle")
        guard let handle else { return statement.completion(.failure(Self.closedError)) }
        state = .busy
        let sent: Int32
        switch statements.plan(for: statement.sql) {
        case .execute(let name):
            sent = sendExecute(statement, name: name, handle: handle)
        case .prepare(let name):
            step = .preparing(statement, name: name)
            // Parameter types are left to the server to infer (nil), as with untyped literals.
            sent = PQsendPrepare(handle, name, statement.sql, Int32(statement.query.bindings.count), nil)
        case .unprepared:
            step = .executing(statement, name: nil)
            sent = LibPQ.withBindings(statement.query) { count, values in
                PQsendQueryParams(handle, statement.sql, count, nil, values, nil, nil, statement.query.resultFormat)
            }
        }
        guard sent == 1 else { return breakConnection(kind: .connectionLost) }
        flush()
    }

    private func sendExecute(_ statement: LoopStatement, name: String, handle: OpaquePointer) -> Int32 {
        step = .executing(statement, name: name)
        return LibPQ.withBindings(statement.query) { count, values in
            PQsendQueryPrepared(handle, name, count, values, nil, nil, statement.query.resultFormat)
        }
    }

    /// Pushes libpq's output buffer to the socket, watching for writability only while some is left.
    private func flush() {
        guard let handle else { return }
        switch PQflush(handle) {
        case 0: if isWatchingWritable { watchSocket(for: .readable) }
        case 1: if !isWatchingWritable { watchSocket(for: [.readable, .writable]) }
        default: breakConnection(kind: .connectionLost)
        }
    }

    private func readResults() {
        guard let handle else { return }
        guard PQconsumeInput(handle) == 1 else { return breakConnection(kind: .connectionLost) }
        while let notification = PQnotifies(handle) { PQfreemem(notification) }
        while state == .busy, PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else {
                // A null result ends the step's results.
                let result = pendingResult
                pendingResult = nil
                finishStep(with: result)
                continue
            }
            if let kept = pendingResult, !LibPQ.isSuccess(kept) {
                PQclear(result)
            } else {
                if let kept = pendingResult { PQclear(kept) }
                pendingResult = result
            }
        }
        // A backend that went away while idle (terminated, server restart) shows up as EOF here.
        if state == .idle, PQstatus(handle) == CONNECTION_BAD {
            breakConnection(kind: .connectionLost)
        }
    }

    private func finishStep(with result: OpaquePointer?) {
        guard let handle, let step else { return }
        self.step = nil
        switch step {
        case .preparing(let statement, let name):
            guard let result, LibPQ.isSuccess(result) else {
                return complete(statement, with: .failure(failure(result, sql: statement.sql)))
            }
            PQclear(result)
            statements.prepared(statement.sql, as: name)
            guard sendExecute(statement, name: name, handle: handle) == 1 else {
                return breakConnection(kind: .connectionLost)
            }
            flush()
        case .executing(let statement, let name):
            if let result, LibPQ.isSuccess(result) {
                return complete(statement, with: .success(QueryResult(taking: result)))
            }
            let error = failure(result, sql: statement.sql)
            // The cached statement went stale: prepare it afresh, once.
            if name != nil, !statement.isRetry, StatementCache.isStale(error) {
                statements.forget(statement.sql)
                var retry = statement
                retry.isRetry = true
                state = .idle
                return start(retry)
            }
            complete(statement, with: .failure(error))
        }
    }

    private func complete(_ statement: LoopStatement, with result: Result<QueryResult, any Error>) {
        if let handle, PQstatus(handle) == CONNECTION_BAD {
            statement.completion(result)
            return breakConnection(kind: .connectionLost)
        }
        state = .idle
        statement.completion(result)
        onIdle(self)
    }

    /// The error a failed result (or no result) stands for; frees the result.
    private func failure(_ result: OpaquePointer?, sql: String) -> PostgresError {
        defer { if let result { PQclear(result) } }
        return LibPQ.error(for: result, on: handle, sql: sql)
    }

    // MARK: breaking and closing

    private static let closedError = PostgresError(kind: .connectionLost, message: "connection is closed")

    private func breakConnection(kind: PostgresError.Kind, message: String? = nil) {
        let message = message ?? handle.flatMap { PostgresError.trimmed(PQerrorMessage($0)) }
        close(because: PostgresError(kind: kind, message: message))
        brokenAt = .now
        onBroken(self)
    }

    /// Releases the connection; a statement in flight fails with `error`.
    func close(because error: PostgresError) {
        if descriptor >= 0 { reactor.unwatch(descriptor) }
        descriptor = -1
        isWatchingWritable = false
        if let pendingResult { PQclear(pendingResult) }
        pendingResult = nil
        if let handle { PQfinish(handle) }
        handle = nil
        statements.removeAll()
        state = .broken
        if let step {
            self.step = nil
            switch step {
            case .preparing(let statement, _), .executing(let statement, _):
                statement.completion(.failure(error))
            }
        }
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings, valid during the call.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
