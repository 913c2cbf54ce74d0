import Foundation
import Postgres
import Synchronization
import TestSupport

/// The moving parts of `ChangeFeedGapProofTests`: writers that hold transactions open, an extra sequencer
/// in small batches, invariant checkers and followers of `GET /changes`, in one ledger or several at once
/// (each ledger's feed is numbered on its own, docs/change-feed.md).
final class GapProof: Sendable {
    let url: String
    /// The ledgers written and followed.
    let ledgers: [Ledger]
    /// Per ledger, the largest `lastSeq` any of its followers has been answered; writers read their ledger's
    /// right before COMMIT.
    let cursors = Mutex<[Int64: Int64]>([:])
    let writersDone = Mutex(false)
    /// What the proof has done so far, across writers and checkers: it writes until this is enough.
    let progress = Mutex(Progress())
    /// Committed transactions and invariant checks the proof needs before its writers stop.
    let enough: Progress
    /// When the writers stop even without enough done (the test then fails: a real stall), and past which
    /// nothing of the proof keeps running.
    let deadline: ContinuousClock.Instant

    struct Progress: Sendable {
        var transactions = 0
        var checks = 0
    }

    /// One ledger of the proof: its id, and how its followers reach its feed (a path prefix such as
    /// `/ledgers/2`, and the headers with a member's token when the server has users).
    struct Ledger: Sendable {
        var id: Int64
        var prefix = ""
        var headers: [(String, String)] = []

        /// Ledger 1 as a server without users serves it: `/changes`, no token.
        static let first = Ledger(id: 1)
    }

    init(url: String, ledgers: [Ledger] = [.first], enough: Progress, within limit: Duration) {
        self.url = url
        self.ledgers = ledgers
        self.enough = enough
        deadline = ContinuousClock.now + limit
    }

    /// Whether the writers have done enough, or time is up.
    var shouldStopWriting: Bool {
        let done = progress.withLock { $0 }
        return (done.transactions >= enough.transactions && done.checks >= enough.checks) || ContinuousClock.now >= deadline
    }

    /// Whether the checkers and the extra sequencer should stop: the writers are done, or time is up.
    private var shouldStopChecking: Bool {
        writersDone.withLock { $0 } || ContinuousClock.now >= deadline
    }

    struct Key: Hashable, Sendable, CustomStringConvertible {
        var ledger: Int64 = 1
        var collection: String
        var id: String
        var description: String { "\(ledger):\(collection)/\(id)" }
    }

    struct State: Hashable, Sendable {
        var op: String
        var version: Int
    }

    /// A record's state after a committed transaction, and the follower cursor read just before its COMMIT.
    struct CommittedWrite: Sendable {
        var key: Key
        var state: State
        var cursorBeforeCommit: Int64
    }

    struct Seen: Sendable {
        var state: State
        var seq: Int64
    }

    struct Follower: Sendable {
        var ledger: Int64
        var seen: [Key: Seen] = [:]
        var orderViolations: [String] = []
        var pages = 0
    }

    struct InvariantChecks: Sendable {
        var count = 0
        var violations: [String] = []
    }

    /// Test-only audit: every stamp is recorded under its ledger and seq, so a seq stamped twice in a ledger
    /// fails the sequencer on the primary key, and `count = max = last_seq` of a ledger in one snapshot means
    /// it holds exactly 1…last_seq of that ledger. A run stamps a record's first change by inserting its log
    /// row and a later one by updating it.
    static func installAudit(_ url: String) async throws {
        try await execute(
            url,
            """
            CREATE TABLE change_seq_audit (ledger_id bigint NOT NULL, seq bigint NOT NULL, collection text NOT NULL,
                                           record_key text NOT NULL, PRIMARY KEY (ledger_id, seq));
            CREATE FUNCTION audit_change_seq() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO change_seq_audit VALUES (NEW.ledger_id, NEW.seq, NEW.collection, NEW.record_key); RETURN NULL; END $$;
            CREATE TRIGGER change_log_audit AFTER UPDATE OF seq ON change_log FOR EACH ROW
                WHEN (NEW.seq IS NOT NULL AND NEW.seq IS DISTINCT FROM OLD.seq) EXECUTE FUNCTION audit_change_seq();
            CREATE TRIGGER change_log_audit_first AFTER INSERT ON change_log FOR EACH ROW
                WHEN (NEW.seq IS NOT NULL) EXECUTE FUNCTION audit_change_seq();
            """)
    }

    /// The hot category every writer of `ledger` contends on (id 1 in every ledger), and the generic
    /// collection the writers' notes live in.
    static func seed(_ url: String, ledger: Int64 = 1) async throws {
        try await execute(
            url,
            """
            INSERT INTO categories (ledger_id, id, title, amount) VALUES (\(ledger), 1, 'Hot', 1);
            INSERT INTO collections (ledger_id, name, kind) VALUES (\(ledger), 'notes', 'plural');
            """)
    }

    /// Runs one query on a connection of its own, after `setup` (statements for the same session), and
    /// answers the first column of its first row.
    static func scalar(_ url: String, _ sql: String, setup: String? = nil) async throws -> String? {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            if let setup { try connection.execute(script: setup) }
            let result = try connection.query(Query(unsafeSQL: sql))
            return result.count > 0 ? result[0].column(0) : nil
        }
    }

    /// Runs one or more statements on a connection of its own.
    static func execute(_ url: String, _ script: String) async throws {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            try connection.execute(script: script)
        }
    }

    /// One page of `ledger`'s feed from `server`.
    static func changes(_ server: ServerProcess, since: Int64, limit: Int = 100, ledger: Ledger = .first) async throws
        -> (changes: [[String: Any]], lastSeq: Int64, hasMore: Bool)
    {
        let path = "\(ledger.prefix)/changes?since=\(since)&limit=\(limit)"
        let response = try await server.request("GET", path, headers: ledger.headers)
        guard response.status == 200,
            let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        else {
            throw UnexpectedAnswer(description: "GET \(path) answered \(response.status): \(response.text)")
        }
        return (
            object["changes"] as? [[String: Any]] ?? [], (object["lastSeq"] as? NSNumber)?.int64Value ?? -1,
            object["hasMore"] as? Bool ?? true
        )
    }

    /// Every live record of every ledger as the tables hold it, plus a tombstone for each record a write deleted.
    static func finalStates(_ url: String, deletions writes: [CommittedWrite]) async throws -> [Key: State] {
        let live = try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var states: [Key: State] = [:]
            for row in try connection.query(
                """
                SELECT ledger_id, 'categories', id::text, version FROM categories
                UNION ALL SELECT ledger_id, 'transactions', id::text, version FROM transactions
                UNION ALL SELECT ledger_id, collection, id, version FROM documents
                """)
            {
                let key = Key(
                    ledger: try row.decode(Int64.self, at: 0), collection: try row.decode(String.self, at: 1),
                    id: try row.decode(String.self, at: 2))
                states[key] = State(op: "upsert", version: try row.decode(Int.self, at: 3))
            }
            return states
        }
        var states = live
        for write in writes where write.state.op == "delete" && live[write.key] == nil {
            states[write.key] = write.state
        }
        return states
    }

    /// A second sequencer besides the servers', stamping at most 7 changes per run so that batches are
    /// small and interleave as much as they can; answers how many runs stamped something.
    func advanceInSmallBatches() async throws -> Int {
        try await runOffCooperativePool { [self] in
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var runs = 0
            while !shouldStopChecking {
                if try connection.query("SELECT advance_change_feed(7)")[0].decode(Int.self, at: 0) > 0 {
                    runs += 1
                } else {
                    usleep(1_000)
                }
            }
            return runs
        }
    }

    /// Checks, each in a snapshot of its own, that the stamps visible in each ledger are exactly 1…last_seq
    /// of that ledger.
    func checkInvariant(connections: Int) async throws -> InvariantChecks {
        try await withThrowingTaskGroup(of: InvariantChecks.self) { group in
            for _ in 0..<connections {
                group.addTask { [self] in
                    try await runOffCooperativePool { [self] in
                        let connection = try Connection.connect(to: url)
                        defer { connection.close() }
                        var checks = InvariantChecks()
                        while !shouldStopChecking {
                            for row in try connection.query(
                                """
                                SELECT s.ledger_id, s.last_seq, count(a.seq), coalesce(max(a.seq), 0)
                                FROM change_feed_state s LEFT JOIN change_seq_audit a ON a.ledger_id = s.ledger_id
                                GROUP BY s.ledger_id, s.last_seq
                                """)
                            {
                                let (ledger, last) = (try row.decode(Int64.self, at: 0), try row.decode(Int64.self, at: 1))
                                let (count, max) = (try row.decode(Int64.self, at: 2), try row.decode(Int64.self, at: 3))
                                if count != max || max != last {
                                    checks.violations.append("ledger \(ledger): last_seq \(last), count \(count), max \(max)")
                                }
                            }
                            checks.count += 1
                            progress.withLock { $0.checks += 1 }
                        }
                        return checks
                    }
                }
            }
            return try await group.reduce(into: InvariantChecks()) {
                $0.count += $1.count; $0.violations += $1.violations
            }
        }
    }

    /// Pages through `ledger`'s feed, 7 changes at a time, alternating between the servers, until a page
    /// asked for after the writers finished comes back empty.
    func follow(_ ledger: Ledger, servers: [ServerProcess], startingWith first: Int) async throws -> Follower {
        var follower = Follower(ledger: ledger.id)
        var since: Int64 = 0
        var lastSeq: Int64 = 0
        // The writers stop by `deadline` at the latest; draining what they wrote takes far less than this.
        let deadline = self.deadline + .seconds(120)
        while ContinuousClock.now < deadline {
            let isFinal = writersDone.withLock { $0 }
            let page = try await Self.changes(
                servers[(first + follower.pages) % servers.count], since: since, limit: 7,
                ledger: ledger)
            follower.pages += 1
            for change in page.changes {
                let seq = (change["seq"] as? NSNumber)?.int64Value ?? -1
                if seq <= lastSeq { follower.orderViolations.append("seq \(seq) after \(lastSeq)") }
                lastSeq = seq
                let id = (change["id"] as? NSNumber)?.stringValue ?? change["id"] as? String ?? "?"
                let key = Key(ledger: ledger.id, collection: change["collection"] as? String ?? "?", id: id)
                follower.seen[key] = Seen(
                    state: State(op: change["op"] as? String ?? "?", version: change["version"] as? Int ?? -1),
                    seq: seq)
            }
            if page.lastSeq < since { follower.orderViolations.append("lastSeq \(page.lastSeq) below since \(since)") }
            since = page.lastSeq
            cursors.withLock { $0[ledger.id] = max($0[ledger.id] ?? 0, page.lastSeq) }
            if isFinal && !page.hasMore && page.changes.isEmpty { return follower }
        }
        throw WaitTimedOut(description: "a follower of ledger \(ledger.id) did not drain its feed within 120 s of the writers' deadline")
    }
}
