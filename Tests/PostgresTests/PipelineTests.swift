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

    // MARK: ReservedConnection

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

    @Test func aDeferredStatementRunsWithTheCommitAndAfterTheBodysOwn() async throws {
        let pool = try await pool()
        let seen = try await pool.withReservedConnection { reserved in
            try await reserved.transaction {
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

    @Test func aFailingDeferredStatementFailsTheCommitAndRollsBack() async throws {
        let pool = try await pool()
        let error = await #expect(throws: PostgresError.self) {
            try await pool.withReservedConnection { reserved in
                try await reserved.transaction {
                    _ = try await reserved.query("INSERT INTO items VALUES (\("dup"))")
                    reserved.deferUntilCommit("INSERT INTO items VALUES (\("dup"))")
                }
            }
        }
        #expect(error?.constraint == "items_name_unique")
        #expect(try await names(pool).isEmpty)
        await pool.shutdown()
    }

    @Test func aRolledBackScopeNeverSendsItsDeferredStatementOrAnUnsentBegin() async throws {
        let pool = try await pool()
        try await pool.withReservedConnection { reserved in
            try await reserved.transaction {
                _ = try await reserved.query("INSERT INTO items VALUES (\("outer"))")
                let inner = try await reserved.transaction(commitIf: { _ in false }) {
                    // A deferred statement that would fail: sending it would fail the outer transaction.
                    reserved.deferUntilCommit("INSERT INTO items VALUES (\("outer"))")
                    return 1
                }
                #expect(inner == 1)
                // A scope with only a deferred statement, committed: it runs.
                try await reserved.transaction { reserved.deferUntilCommit("INSERT INTO items VALUES (\("only deferred"))") }
            }
        }
        #expect(try await names(pool) == ["only deferred", "outer"])
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
