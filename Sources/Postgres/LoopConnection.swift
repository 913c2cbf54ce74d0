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

/// Statements for a `LoopConnection` to send in one round trip (libpq pipeline mode), and whoever waits for
/// their outcomes: one per statement (its rows, its error, or the earlier error it was skipped for), or the
/// error that ended the round trip itself.
struct LoopPipeline {
    let queries: [Query]
    let completion: (Result<[Result<QueryResult, PostgresError>], PostgresError>) -> Void
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
        case pipelining(PipelineReading)
    }

    /// A pipeline in flight: what was sent, in order, and the outcomes read so far.
    private final class PipelineReading {
        enum Command {
            case prepare(sql: String, name: String)
            case execute(sql: String)
        }

        let pipeline: LoopPipeline
        var commands: [Command] = []
        /// The command whose results arrive now.
        var next = 0
        /// Its result so far: the first error, or else the latest.
        var result: OpaquePointer?
        var outcomes: [Result<QueryResult, PostgresError>] = []
        /// The first failure: it answers every statement the server skipped after it.
        var failure: PostgresError?

        init(_ pipeline: LoopPipeline) {
            self.pipeline = pipeline
        }
    }

    private let reactor: any Reactor
    private let configuration: PoolConfiguration
    /// Told when the connection can take a statement, and when it broke (the statement in flight has failed).
    var onIdle: (LoopConnection) -> Void = { _ in }
    var onBroken: (LoopConnection) -> Void = { _ in }

    private(set) var state = State.broken
    /// Held by a `LoopReservation`: between its statements the connection is idle but serves nobody else.
    var isReserved = false
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
        if case .pipelining(let reading) = step { return readPipeline(reading, handle: handle) }
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
        case .pipelining:
            preconditionFailure("a pipeline's results are read by readPipeline")
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

    /// Whether the session is inside a transaction (open or failed), by what the server last reported.
    var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Whether the session's transaction has failed, so that only a rollback can follow.
    var isTransactionFailed: Bool {
        handle.map { PQtransactionStatus($0) == PQTRANS_INERROR } ?? false
    }

    // MARK: pipelines

    /// Sends `pipeline`'s statements and one Sync; its completion is called on this thread when the Sync's
    /// answer arrives. Each statement is prepared on first use of its text, in the same round trip.
    func start(_ pipeline: LoopPipeline) {
        precondition(state == .idle, "start(_:) on a connection that is not idle")
        guard let handle else { return pipeline.completion(.failure(Self.closedError)) }
        do {
            for query in pipeline.queries { try query.checkSendable() }
        } catch {
            return pipeline.completion(.failure(error as? PostgresError ?? PostgresError(kind: .protocolViolation, message: "\(error)")))
        }
        guard PQenterPipelineMode(handle) == 1 else {
            return pipeline.completion(.failure(PostgresError(kind: .protocolViolation, message: "libpq refused pipeline mode")))
        }
        state = .busy
        let reading = PipelineReading(pipeline)
        step = .pipelining(reading)
        var preparingNow: [String: String] = [:]
        for query in pipeline.queries {
            let sql = query.sql
            var name = preparingNow[sql]
            if name == nil {
                switch statements.plan(for: sql) {
                case .execute(let cached): name = cached
                case .prepare(let fresh):
                    guard PQsendPrepare(handle, fresh, sql, Int32(query.bindings.count), nil) == 1 else {
                        return breakConnection(kind: .connectionLost)
                    }
                    reading.commands.append(.prepare(sql: sql, name: fresh))
                    preparingNow[sql] = fresh
                    name = fresh
                case .unprepared: break
                }
            }
            let sent = LibPQ.withBindings(query) { count, values in
                if let name {
                    PQsendQueryPrepared(handle, name, count, values, nil, nil, query.resultFormat)
                } else {
                    PQsendQueryParams(handle, sql, count, nil, values, nil, nil, query.resultFormat)
                }
            }
            guard sent == 1 else { return breakConnection(kind: .connectionLost) }
            reading.commands.append(.execute(sql: sql))
        }
        guard PQpipelineSync(handle) == 1 else { return breakConnection(kind: .connectionLost) }
        flush()
    }

    /// Reads what has arrived of a pipeline's results: each command's result, then a null, and after the
    /// last command the Sync's result, which ends it.
    private func readPipeline(_ reading: PipelineReading, handle: OpaquePointer) {
        while state == .busy, PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else {
                guard reading.next < reading.commands.count else { return breakConnection(kind: .protocolViolation) }
                endCommand(of: reading)
                continue
            }
            switch PQresultStatus(result) {
            case PGRES_PIPELINE_SYNC:
                PQclear(result)
                guard reading.next == reading.commands.count, PQexitPipelineMode(handle) == 1 else {
                    return breakConnection(kind: .protocolViolation)
                }
                // A cached statement that went stale is prepared afresh on its next use, as elsewhere.
                if let failure = reading.failure, StatementCache.isStale(failure), let sql = failure.sql { statements.forget(sql) }
                step = nil
                if PQstatus(handle) == CONNECTION_BAD {
                    reading.pipeline.completion(.success(reading.outcomes))
                    return breakConnection(kind: .connectionLost)
                }
                state = .idle
                reading.pipeline.completion(.success(reading.outcomes))
                if state == .idle { onIdle(self) }
                return
            case PGRES_PIPELINE_ABORTED:
                // Skipped after an earlier failure, which answers for it.
                PQclear(result)
            default:
                if let kept = reading.result, !LibPQ.isSuccess(kept) {
                    PQclear(result)
                } else {
                    if let kept = reading.result { PQclear(kept) }
                    reading.result = result
                }
            }
        }
    }

    /// Records the outcome of the command whose results just ended.
    private func endCommand(of reading: PipelineReading) {
        let command = reading.commands[reading.next]
        reading.next += 1
        let result = reading.result
        reading.result = nil
        switch command {
        case .prepare(let sql, let name):
            if let result, LibPQ.isSuccess(result) {
                statements.prepared(sql, as: name)
                PQclear(result)
            } else if let result {
                reading.failure = reading.failure ?? failure(result, sql: sql)
            }
        case .execute(let sql):
            if let result, LibPQ.isSuccess(result), reading.failure == nil {
                return reading.outcomes.append(.success(QueryResult(taking: result)))
            }
            if let result, LibPQ.isSuccess(result) {
                PQclear(result)
            } else if let result {
                reading.failure = reading.failure ?? failure(result, sql: sql)
            }
            reading.outcomes.append(.failure(reading.failure ?? Connection.skippedWithoutCause))
        }
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
            case .pipelining(let reading):
                if let result = reading.result { PQclear(result) }
                reading.pipeline.completion(.failure(error))
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
