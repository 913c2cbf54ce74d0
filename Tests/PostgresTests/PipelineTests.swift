import Logging
import Postgres
import TestSupport
import Testing

/// `Connection.pipeline` and what `ReservedConnection` sends through it (docs/sync.md, "How a push is
/// written"): several statements in one round trip, answered in order, a failure stopping the rest.
@Suite("Pipelined statements")
struct PipelineTests {
    @Test func resultsComeInTheOrderSentAndAStatementSeesTheOnesBeforeIt() async throws {
        let connection = try await ItemsTable.connection()
        let results = try connection.pipeline([
            "INSERT INTO items VALUES (\("b")) RETURNING name",
            "SELECT count(*)::int FROM items",
            "INSERT INTO items VALUES (\("a")), (\("c"))",
            "SELECT string_agg(name, ',' ORDER BY name) FROM items WHERE name <> \("x")",
        ])
        #expect(results.count == 4)
        #expect(try results[0][0].decode(String.self, at: 0) == "b")
        #expect(try results[1][0].decode(Int.self, at: 0) == 1)
        #expect(results[2].affectedRows == 2)
        #expect(try results[3][0].decode(String.self, at: 0) == "a,b,c")
        // The same texts again run as the statements prepared the first time, alone or pipelined.
        #expect(try connection.query("SELECT count(*)::int FROM items")[0].decode(Int.self, at: 0) == 3)
        let again = try connection.pipeline(["SELECT count(*)::int FROM items", "SELECT count(*)::int FROM items"])
        #expect(try again.map { try $0[0].decode(Int.self, at: 0) } == [3, 3])
    }

    @Test func aFailureInTheMiddleSkipsTheRestAndLeavesTheConnectionUsable() async throws {
        let connection = try await ItemsTable.connection()
        try connection.execute("INSERT INTO items VALUES (\("taken"))")
        let error = #expect(throws: PostgresError.self) {
            try connection.pipeline([
                "INSERT INTO items VALUES (\("first"))",
                "INSERT INTO items VALUES (\("taken"))",
                "INSERT INTO items VALUES (\("after"))",
            ])
        }
        #expect(error?.constraint == "items_name_unique")
        #expect(error?.sqlState == .uniqueViolation)
        // Outside a transaction the pipeline is one implicit transaction: the first insert went too.
        #expect(try ItemsTable.names(connection) == ["taken"])
        #expect(!connection.isInTransaction)
        // Usable at once, by a pipeline and by a single statement.
        let results = try connection.pipeline(["INSERT INTO items VALUES (\("next"))", "SELECT count(*)::int FROM items"])
        #expect(try results[1][0].decode(Int.self, at: 0) == 2)
        #expect(try ItemsTable.names(connection) == ["next", "taken"])
    }

    @Test func aFailureInsideATransactionLeavesItFailedUntilRollback() async throws {
        let connection = try await ItemsTable.connection()
        #expect(throws: PostgresError.self) {
            try connection.pipeline([
                "BEGIN", "INSERT INTO items VALUES (\("a"))", "SELECT 1 / \(0)", "INSERT INTO items VALUES (\("b"))", "COMMIT",
            ])
        }
        #expect(connection.isInTransaction)
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1") }
        _ = try connection.pipeline(["ROLLBACK"])
        #expect(!connection.isInTransaction)
        #expect(try ItemsTable.names(connection).isEmpty)
    }

    @Test func aStatementThatCannotBePreparedFailsAloneAndIsNotCached() async throws {
        let connection = try await ItemsTable.connection()
        #expect(throws: PostgresError.self) {
            try connection.pipeline(["SELECT 1", "SELECT * FROM no_such_table", "SELECT 2"])
        }
        try connection.execute("CREATE TABLE no_such_table (n int)")
        let results = try connection.pipeline(["SELECT count(*)::int FROM no_such_table"])
        #expect(try results[0][0].decode(Int.self, at: 0) == 0)
        #expect(try connection.pipeline([]).isEmpty)
    }

    // MARK: held transactions: a pool worker's (ReservedConnection) and an event loop's (LoopReservation)

    private func pool(size: Int = 1, checkoutTimeout: Duration = .seconds(30)) async throws -> ConnectionPool {
        let pool = ConnectionPool(
            configuration: PoolConfiguration(url: try await TestDatabase.empty(), size: size, checkoutTimeout: checkoutTimeout),
            logger: Logger(label: "PipelineTests"))
        try await pool.withConnection { try $0.execute("CREATE TABLE items (name text CONSTRAINT items_name_unique UNIQUE)") }
        return pool
    }

    private func names(_ pool: ConnectionPool) async throws -> [String] {
        try await pool.withConnection { try ItemsTable.names($0) }
    }

    /// Where a held transaction runs.
    enum Holder: CaseIterable, Sendable {
        case poolWorker, eventLoop
    }

    /// Runs `body` with a connection held the way `holder` holds it, on a fresh `items` database (pool of one).
    private func holding<T: Sendable>(
        _ holder: Holder, _ body: @escaping @Sendable (any TransactionRunner) async throws -> T
    ) async throws -> (T, ConnectionPool) {
        let pool = try await pool()
        switch holder {
        case .poolWorker:
            return (try await pool.withReservedConnection { try await body($0) }, pool)
        case .eventLoop:
            let value = try await TestReactor.withLoopConnections(pool: pool, count: 1) { loop in
                // Opened by a first statement, as a request's would be.
                _ = try await loop.query("SELECT 1")
                let reservation = try #require(loop.reserve())
                defer { reservation.release() }
                return try await body(reservation)
            }
            return (value, pool)
        }
    }

    @Test(arguments: Holder.allCases)
    func aDeferredStatementRunsWithTheCommitAndAfterTheBodysOwn(holder: Holder) async throws {
        let (seen, pool) = try await holding(holder) { reserved in
            try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                _ = try await reserved.query("INSERT INTO items VALUES (\("body"))")
                reserved.deferUntilCommit("INSERT INTO items SELECT 'deferred after ' || count(*) FROM items")
                // A statement after the deferral runs after the deferred one, in its round trip.
                return try await reserved.query("SELECT count(*)::int FROM items")[0].decode(Int.self, at: 0)
            }
        }
        #expect(seen == 2)
        #expect(try await names(pool) == ["body", "deferred after 1"])
        await pool.shutdown()
    }

    @Test(arguments: Holder.allCases)
    func aFailingDeferredStatementFailsTheCommitAndRollsBack(holder: Holder) async throws {
        let (error, pool) = try await holding(holder) { reserved in
            do {
                try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                    _ = try await reserved.query("INSERT INTO items VALUES (\("dup"))")
                    reserved.deferUntilCommit("INSERT INTO items VALUES (\("dup"))")
                }
                return nil as PostgresError?
            } catch let error as PostgresError {
                // The connection is usable again: the scope was rolled back.
                #expect(try await reserved.query("SELECT 1")[0].decode(Int.self, at: 0) == 1)
                return error
            }
        }
        #expect(error?.constraint == "items_name_unique")
        #expect(try await names(pool).isEmpty)
        await pool.shutdown()
    }

    @Test(arguments: Holder.allCases)
    func aRolledBackScopeNeverSendsItsDeferredStatementOrAnUnsentBegin(holder: Holder) async throws {
        let (_, pool) = try await holding(holder) { reserved in
            try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                _ = try await reserved.query("INSERT INTO items VALUES (\("outer"))")
                let inner = try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in false }) {
                    // A deferred statement that would fail: sending it would fail the outer transaction.
                    reserved.deferUntilCommit("INSERT INTO items VALUES (\("outer"))")
                    return 1
                }
                #expect(inner == 1)
                // A scope with only a deferred statement, committed: it runs.
                try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                    reserved.deferUntilCommit("INSERT INTO items VALUES (\("only deferred"))")
                }
            }
        }
        #expect(try await names(pool) == ["only deferred", "outer"])
        await pool.shutdown()
    }

    @Test(arguments: Holder.allCases)
    func aStatementSentAheadTravelsWithTheNextAndItsRowsArriveWithThatTrip(holder: Holder) async throws {
        let (seen, pool) = try await holding(holder) { reserved in
            try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                let ahead = reserved.sendWithNext("INSERT INTO items VALUES (\("ahead")) RETURNING name")
                #expect(ahead.result == nil, "sent before a statement took it along")
                let count = try await reserved.query("SELECT count(*)::int FROM items")[0].decode(Int.self, at: 0)
                // Delivered by the trip of the statement after it, not by a flush.
                let name = try #require(ahead.result).get()[0].decode(String.self, at: 0)
                return (count, name)
            }
        }
        #expect(seen.0 == 1)
        #expect(seen.1 == "ahead")
        #expect(try await names(pool) == ["ahead"])
        await pool.shutdown()
    }

    @Test(arguments: Holder.allCases)
    func aFailingStatementSentAheadSkipsTheNextOneAndFailsItWithItsError(holder: Holder) async throws {
        let (outcome, pool) = try await holding(holder) { reserved in
            try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                _ = try await reserved.query("INSERT INTO items VALUES (\("taken"))")
            }
            return try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in false }) {
                let ahead = reserved.sendWithNext("INSERT INTO items VALUES (\("taken"))")
                let next = await #expect(throws: PostgresError.self) {
                    try await reserved.query("INSERT INTO items VALUES (\("skipped"))")
                }
                let answer = await #expect(throws: PostgresError.self) { try await reserved.answer(to: ahead) }
                return (next?.constraint, answer?.constraint)
            }
        }
        #expect(outcome.0 == "items_name_unique", "the skipped statement fails with the error of the one before it")
        #expect(outcome.1 == "items_name_unique")
        #expect(try await names(pool) == ["taken"])
        await pool.shutdown()
    }

    @Test(arguments: Holder.allCases)
    func aStatementSentAheadIsSentByFlushOrDroppedWithAScopeThatNeverReachedTheServer(holder: Holder) async throws {
        let (answers, pool) = try await holding(holder) { reserved in
            let flushed = try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                let ahead = reserved.sendWithNext("INSERT INTO items VALUES (\("flushed")) RETURNING name")
                return try await reserved.answer(to: ahead)[0].decode(String.self, at: 0)
            }
            let dropped = try await reserved.transaction(isolation: .readCommitted, commitIf: { _ in false }) {
                reserved.sendWithNext("INSERT INTO items VALUES (\("dropped"))")
            }
            return (flushed, dropped.result)
        }
        #expect(answers.0 == "flushed")
        guard case .failure = answers.1 else {
            Issue.record("a statement of a scope rolled back unsent must answer with an error, not \(String(describing: answers.1))")
            return
        }
        #expect(try await names(pool) == ["flushed"])
        await pool.shutdown()
    }

    // MARK: the event loop's reservation only

    @Test func aLoopReservationRefusesABlockingBodyAndRemembersIt() async throws {
        let pool = try await pool()
        let (refusal, remembered, committed) = try await TestReactor.withLoopConnections(pool: pool, count: 1) { loop in
            _ = try await loop.query("SELECT 1")
            let reservation = try #require(loop.reserve())
            defer { reservation.release() }
            var committed = false
            let refusal = await #expect(throws: PostgresError.self) {
                try await reservation.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                    _ = try await reservation.query("INSERT INTO items VALUES (\("before"))")
                    try await reservation.withConnection { try $0.execute("INSERT INTO items VALUES ('blocking')") }
                    committed = true
                }
            }
            return (refusal, reservation.neededPooledConnection, committed)
        }
        #expect(refusal?.message == LoopReservation.needsPooledConnection.message)
        #expect(remembered)
        #expect(!committed)
        // Rolled back: nothing of the transaction stays, and its locks went with it.
        #expect(try await names(pool).isEmpty)
        await pool.shutdown()
    }

    @Test func aLoopReservationThatMustMoveToThePoolSendsNothingMore() async throws {
        let pool = try await pool()
        try await pool.withConnection { try $0.execute("CREATE SEQUENCE drawn") }
        let (flushRefused, answer) = try await TestReactor.withLoopConnections(pool: pool, count: 1) { loop in
            _ = try await loop.query("SELECT 1")
            let reservation = try #require(loop.reserve())
            defer { reservation.release() }
            var flushRefused = false
            var ahead: PendingAnswer?
            _ = try? await reservation.transaction(isolation: .readCommitted, commitIf: { _ in true }) {
                // A sequence draws even in a transaction rolled back: it shows whether the statement was sent.
                ahead = reservation.sendWithNext("SELECT nextval('drawn')")
                _ = try? await reservation.withConnection { _ in 1 }
                do { try await reservation.flush() } catch { flushRefused = true }
            }
            return (flushRefused, ahead?.result)
        }
        #expect(flushRefused)
        guard case .failure = answer else {
            Issue.record("the statement sent ahead must end unanswered, not \(String(describing: answer))")
            return
        }
        let drawn = try await pool.withConnection { try $0.query("SELECT is_called FROM drawn")[0].decode(Bool.self, at: 0) }
        #expect(!drawn, "the statement sent ahead went to the server")
        await pool.shutdown()
    }

    @Test func aLoopThatRanNoStatementYetOpensAConnectionForItsNextReservation() async throws {
        let pool = try await pool()
        let (first, later) = try await TestReactor.withLoopConnections(pool: pool, count: 1) { loop in
            // Nothing opened the loop's connection: this transaction goes to the pool, and the connection opens.
            let first = loop.reserve() == nil
            var later: LoopReservation?
            try await waitUntil("the loop's connection opened for a later reservation") {
                later = loop.reserve()
                return later != nil
            }
            defer { later?.release() }
            return (first, try await later?.query("SELECT 7")[0].decode(Int.self, at: 0))
        }
        #expect(first)
        #expect(later == 7)
        await pool.shutdown()
    }

    @Test func aLoopConnectionServesStatementsAgainOnceItsReservationEnds() async throws {
        let pool = try await pool()
        let (whileHeld, offThread, after) = try await TestReactor.withLoopConnections(pool: pool, count: 1) { loop in
            _ = try await loop.query("SELECT 1")
            let reservation = try #require(loop.reserve())
            // The only connection is held: no second reservation.
            let whileHeld = loop.reserve() == nil
            // Left inside an open transaction, which release must not hand to the next statement.
            _ = try await reservation.query("BEGIN")
            _ = try await reservation.query("INSERT INTO items VALUES (\("left open"))")
            reservation.release()
            let offThread = await Task.detached { loop.reserve() == nil }.value
            let after = try await loop.query("SELECT count(*)::int FROM items")[0].decode(Int.self, at: 0)
            return (whileHeld, offThread, after)
        }
        #expect(whileHeld)
        #expect(offThread, "a reservation is made on the loop's thread only")
        #expect(after == 0, "the open transaction was not handed on")
        #expect(try await names(pool).isEmpty)
        await pool.shutdown()
    }

    @Test func aReservationThatGetsNoConnectionFailsItsJobsWithThePoolsError() async throws {
        let pool = try await pool(size: 1, checkoutTimeout: .milliseconds(200))
        let holder = try await pool.reserve()
        let error = await #expect(throws: PostgresError.self) {
            try await pool.withReservedConnection { reserved in
                try await reserved.transaction { _ = try await reserved.query("SELECT 1") }
            }
        }
        #expect(error?.kind == .poolTimeout)
        holder.release()
        // The connection serves the next reservation.
        let one = try await pool.withReservedConnection { try await $0.query("SELECT 1")[0].decode(Int.self, at: 0) }
        #expect(one == 1)
        await pool.shutdown()
    }
}
