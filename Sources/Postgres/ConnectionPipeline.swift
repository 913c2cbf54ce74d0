import CLibPQ

// Why a pipeline (docs/sync.md, "How a push is written")
//
// A transaction's statements that do not depend on each other's rows (its BEGIN and its first statement;
// the statements it defers to the end and its COMMIT) need not wait for each other's answers. libpq's
// pipeline mode sends them all, then one Sync, and reads their results in order: one round trip for the
// lot instead of one each. The server runs them one after another exactly as if sent apart; the first
// that fails makes the server skip the rest up to the Sync, after which the connection is usable again
// (inside a transaction, that transaction has failed and only ROLLBACK can follow, as after any error).

extension Connection {
    /// Runs `queries` in order in one round trip (libpq pipeline mode) and answers their rows in order.
    ///
    /// Each is prepared on first use of its text, like `query(_:)`. When one fails, the ones after it are not
    /// run and its error is thrown; the connection leaves pipeline mode either way. Outside a transaction
    /// the queries up to the Sync form one implicit transaction, so a failure undoes the ones before it too.
    ///
    /// For a few statements with small results, as the connection is in blocking mode: libpq writes all of
    /// them before reading any answer, which stalls only if the server fills the socket with results first.
    public func pipeline(_ queries: [Query]) throws -> [QueryResult] {
        try pipelineOutcomes(queries).map { try $0.get() }
    }

    /// `pipeline`, answering each query's own outcome: its rows, its error, or (skipped after a failure) the
    /// failure that made the server skip it. Throws only when the round trip itself failed (the connection
    /// broke, libpq refused), after which the connection is closed.
    func pipelineOutcomes(_ queries: [Query]) throws -> [Result<QueryResult, PostgresError>] {
        guard !queries.isEmpty else { return [] }
        for query in queries { try query.checkSendable() }
        let handle = try openHandle()
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError(
                kind: .protocolViolation, message: "libpq refused pipeline mode: \(PostgresError.trimmed(PQerrorMessage(handle)) ?? "")")
        }
        // What was sent for each query: the name it was prepared under in this pipeline, if it was.
        var steps: [(sql: String, preparing: String?)] = []
        var preparingNow: [String: String] = [:]
        for query in queries {
            let sql = query.sql
            var preparing: String?
            var name: String?
            if let pending = preparingNow[sql] {
                name = pending
            } else {
                switch statements.plan(for: sql) {
                case .execute(let cached): name = cached
                case .prepare(let fresh):
                    guard PQsendPrepare(handle, fresh, sql, Int32(query.bindings.count), nil) == 1 else { return try abandon(handle, sql: sql) }
                    preparingNow[sql] = fresh
                    preparing = fresh
                    name = fresh
                case .unprepared: break
                }
            }
            let sent = LibPQ.withBindings(query) { count, values in
                if let name {
                    PQsendQueryPrepared(handle, name, count, values, nil, nil, 0)
                } else {
                    PQsendQueryParams(handle, sql, count, nil, values, nil, nil, 0)
                }
            }
            guard sent == 1 else { return try abandon(handle, sql: sql) }
            steps.append((sql, preparing))
        }
        guard PQpipelineSync(handle) == 1 else { return try abandon(handle, sql: steps.last?.sql ?? "") }

        var outcomes: [Result<QueryResult, PostgresError>] = []
        var failure: PostgresError?
        for step in steps {
            if let name = step.preparing {
                let prepared = try nextResult(handle, sql: step.sql)
                if let prepared, LibPQ.isSuccess(prepared) {
                    statements.prepared(step.sql, as: name)
                    PQclear(prepared)
                } else if let error = note(prepared, sql: step.sql) {
                    failure = failure ?? error
                }
            }
            let result = try nextResult(handle, sql: step.sql)
            if let result, LibPQ.isSuccess(result) {
                if failure == nil {
                    outcomes.append(.success(QueryResult(taking: result)))
                    continue
                }
                PQclear(result)
            } else if let error = note(result, sql: step.sql) {
                failure = failure ?? error
            }
            outcomes.append(.failure(failure ?? Self.skippedWithoutCause))
        }
        // The Sync's own result closes the pipeline; nothing is left to read after it.
        guard let sync = PQgetResult(handle), PQresultStatus(sync) == PGRES_PIPELINE_SYNC else {
            return try abandon(handle, sql: steps.last?.sql ?? "")
        }
        PQclear(sync)
        guard PQexitPipelineMode(handle) == 1 else { return try abandon(handle, sql: steps.last?.sql ?? "") }
        // A cached statement that went stale is prepared afresh on its next use, as `query(_:)` does.
        if let failure, StatementCache.isStale(failure), let sql = failure.sql, let name = statements.forget(sql), !isTransactionFailed {
            PQclear(PQexec(handle, "DEALLOCATE \(name)"))
        }
        return outcomes
    }

    /// A skipped statement's error when the server sent no error for the failure before it (never expected).
    static let skippedWithoutCause = PostgresError(kind: .protocolViolation, message: "a pipelined statement was skipped without an error before it")

    /// The one result of the next step of a pipeline, after which libpq answers null; nil when the step was
    /// skipped after an earlier failure or no result came.
    private func nextResult(_ handle: OpaquePointer, sql: String) throws -> OpaquePointer? {
        guard let result = PQgetResult(handle) else { return try abandon(handle, sql: sql) }
        // Each step's results end with a null; a statement yields one result (no COPY, no single-row mode).
        if let extra = PQgetResult(handle) {
            PQclear(extra)
            PQclear(result)
            return try abandon(handle, sql: sql)
        }
        if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
            PQclear(result)
            return nil
        }
        return result
    }

    /// The error a failed step stands for (nil for a skipped one, which the earlier failure explains); frees it.
    private func note(_ result: OpaquePointer?, sql: String) -> PostgresError? {
        guard let result else { return nil }
        defer { PQclear(result) }
        return LibPQ.error(for: result, on: handle, sql: sql)
    }

    /// Gives up on a pipeline libpq could not send or whose results made no sense: the connection's state is
    /// unknown, so it is closed (the pool replaces it) and the failure thrown.
    private func abandon<T>(_ handle: OpaquePointer, sql: String) throws -> T {
        let lost = PQstatus(handle) != CONNECTION_OK
        let message = PostgresError.trimmed(PQerrorMessage(handle)) ?? "the pipeline's results were not as sent"
        close()
        throw PostgresError(kind: lost ? .connectionLost : .protocolViolation, message: message, sql: sql)
    }
}
