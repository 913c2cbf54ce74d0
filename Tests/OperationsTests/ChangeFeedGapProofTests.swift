import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport

/// The oracle test of the change feed's sequencer (docs/change-feed.md): two server processes on one
/// database, writers whose transactions commit far out of write order, and checks of the one guarantee
/// the feed rests on, "a snapshot that shows seq N shows every seq up to N", in thousands of snapshots.
@Suite struct ChangeFeedGapProofTests {
    static let writers = 6
    static let followers = 3
    /// The writers go on until this much is done, however long that takes on the machine: 300 committed
    /// transactions (about four seconds on an idle two-core machine) and 100 invariant checks meanwhile.
    static let enough = GapProof.Progress(transactions: 300, checks: 100)
    /// A bound, not a measure: only a stalled feed or database takes this long.
    static let writingLimit = Duration.seconds(240)

    /// The key the sequencer takes (migrations/0011).
    static let sequencerKey: Int64 = 7089063307574158691

    @Test func commitsOutOfOrderNeverOpenAGap() async throws {
        let url = try await TestDatabase.fresh()
        try await GapProof.installAudit(url)
        let servers = [try await ServerProcess.start(["--database-url", url]),
                       try await ServerProcess.start(["--database-url", url])]
        try await GapProof.seed(url)
        let proof = GapProof(url: url, enough: Self.enough, within: Self.writingLimit)

        async let sequencerRuns = proof.advanceInSmallBatches()
        async let invariantChecks = proof.checkInvariant(connections: 2)
        async let follows = withThrowingTaskGroup(of: GapProof.Follower.self) { group in
            for number in 0..<Self.followers {
                group.addTask { try await proof.follow(servers: servers, startingWith: number % servers.count) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let writes: [GapProof.CommittedWrite]
        do {
            writes = try await withThrowingTaskGroup(of: [GapProof.CommittedWrite].self) { group in
                for number in 0..<Self.writers {
                    group.addTask { try await proof.write(as: number) }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        } catch {
            // The checkers and followers run until the writers are done, failed ones included.
            proof.writersDone.withLock { $0 = true }
            throw error
        }
        proof.writersDone.withLock { $0 = true }
        let (runs, checks, followed) = try await (sequencerRuns, invariantChecks, follows)

        let done = proof.progress.withLock { $0 }
        #expect(done.transactions >= Self.enough.transactions && done.checks >= Self.enough.checks,
                "a stall: \(done.transactions) transactions and \(done.checks) invariant checks in \(Self.writingLimit)")
        #expect(checks.violations.isEmpty, "snapshots broke count = max = last_seq: \(checks.violations.prefix(5))")
        #expect(runs > 0)
        #expect(try await GapProof.scalar(url, "SELECT count(*) FROM change_log WHERE seq IS NULL") == "0")
        let lastSeq = try await GapProof.scalar(url, "SELECT last_seq FROM change_feed_state")
        #expect(try await GapProof.scalar(url, "SELECT count(*) FROM change_seq_audit") == lastSeq,
                "every seq up to last_seq was stamped exactly once")

        let expected = try await GapProof.finalStates(url, deletions: writes)
        #expect(expected.count > Self.writers * 10)
        for follower in followed {
            #expect(follower.orderViolations.isEmpty, "seqs went back: \(follower.orderViolations.prefix(5))")
            let wrong = expected.filter { key, state in follower.seen[key].map { $0.state != state } ?? true }
            #expect(wrong.isEmpty, "\(wrong.count) records not seen at their final state, e.g. \(wrong.first.map { "\($0)" } ?? "")")
            // The direct proof: a write that committed after a follower had been answered lastSeq = C appears
            // above C, so following the feed from C cannot have skipped it.
            var early: [String] = []
            for write in writes {
                guard let seen = follower.seen[write.key], seen.state == write.state else { continue }
                if seen.seq <= write.cursorBeforeCommit {
                    early.append("\(write.key) v\(write.state.version) at seq \(seen.seq) ≤ cursor \(write.cursorBeforeCommit)")
                }
            }
            #expect(early.isEmpty, "\(early.count) writes appeared at or below a cursor read before they committed: \(early.prefix(5))")
        }
        print("gap proof: \(writes.count) committed transactions by \(Self.writers) writers, \(runs) small sequencer runs, "
            + "\(checks.count) invariant checks, \(followed.map(\.pages)) pages followed, last_seq \(lastSeq ?? "?")")
    }

    /// A long transaction holds back only its own change: the writes that commit meanwhile reach the feed at
    /// once, and the long one follows above all of them when it commits.
    @Test func aLongTransactionHoldsBackOnlyItsOwnChange() async throws {
        let url = try await TestDatabase.fresh()
        let server = try await ServerProcess.start(["--database-url", url])
        let long = try await HeldDatabaseSession.open(url)
        try await long.execute("BEGIN; INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'long', 1)")
        var seqs: [Int64] = []
        for number in 1...10 {
            let created = try await server.request("POST", "/categories", json: #"{"title":"quick \#(number)","amount":1}"#)
            #expect(created.status == 201)
            let feed = try await GapProof.changes(server, since: seqs.last ?? 0)
            // Each quick write is in the feed by the time the next request asks, the long one never.
            #expect(feed.changes.count == 1, "\(feed.changes)")
            seqs.append(feed.lastSeq)
        }
        try await long.execute("COMMIT")
        await long.close()
        let after = try await GapProof.changes(server, since: seqs.last ?? 0)
        #expect(after.changes.map { $0["id"] as? Int } == [1])
        #expect(after.lastSeq > seqs.last ?? .max)
    }

    /// A sequencer run never waits for a writer: a transaction holding an uncommitted rewrite of R leaves
    /// R's committed version to be stamped at once, and its own change reaches the feed above the cursor
    /// taken meanwhile when it commits.
    @Test func aRunNeverWaitsForAnOpenWriter() async throws {
        let url = try await TestDatabase.fresh()
        let server = try await ServerProcess.start(["--database-url", url])
        try await GapProof.execute(url, "INSERT INTO categories (ledger_id, id, title, amount) VALUES (1, 1, 'R', 1)")
        let rewriting = try await HeldDatabaseSession.open(url)
        try await rewriting.execute("BEGIN; UPDATE categories SET amount = 2, version = version + 1 WHERE id = 1")
        // With R rewritten and not committed, a run must answer at once (a 2 s statement timeout would fail it).
        let run = try await GapProof.scalar(url, "SELECT advance_change_feed()", setup: "SET statement_timeout = '2s'")
        #expect(run.flatMap { Int($0) } != nil, "the run answered")
        #expect(try await GapProof.scalar(url, "SELECT count(*) FROM change_pending") == "0", "the rewrite is not visible yet")
        let before = try await GapProof.changes(server, since: 0)
        #expect(before.changes.map { $0["version"] as? Int } == [1])
        try await rewriting.execute("COMMIT")
        await rewriting.close()
        let feed = try await GapProof.changes(server, since: before.lastSeq)
        #expect(feed.changes.map { $0["version"] as? Int } == [2])
        #expect(feed.lastSeq > before.lastSeq)
    }

    /// A sequencer killed while it waits for the feed's lock loses nothing and stamps nothing twice: its
    /// process reconnects and the next run stamps every change once.
    @Test func aSequencerKilledMidRunLosesNothingAndStampsNothingTwice() async throws {
        let url = try await TestDatabase.fresh()
        try await GapProof.installAudit(url)
        let server = try await ServerProcess.start(["--database-url", url])
        let holder = try await HeldDatabaseSession.open(url)
        try await holder.execute("SELECT pg_advisory_lock(\(Self.sequencerKey))")
        let created = try await server.request("POST", "/categories", json: #"{"title":"Held","amount":1}"#)
        #expect(created.status == 201)
        // The write's kick sends the sequencer into pg_advisory_xact_lock, where it waits for the holder.
        try await waitUntil("the sequencer waits for the feed's lock") {
            try await GapProof.scalar(url, """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'SELECT stamped, touched FROM stamp_change_feed%' AND wait_event_type = 'Lock'
                """) == "1"
        }
        let terminated = try await GapProof.scalar(url, """
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = current_database() AND query LIKE 'SELECT stamped, touched FROM stamp_change_feed%' AND wait_event_type = 'Lock'
            """)
        #expect(terminated == "1")
        try await holder.execute("SELECT pg_advisory_unlock(\(Self.sequencerKey))")
        await holder.close()
        _ = try await server.request("POST", "/categories", json: #"{"title":"After","amount":1}"#)
        let feed = try await GapProof.changes(server, since: 0)
        #expect(feed.changes.map { $0["id"] as? Int } == [1, 2])
        #expect(feed.lastSeq == 2)
        #expect(try await GapProof.scalar(url, "SELECT count(*) || '/' || max(seq) FROM change_seq_audit") == "2/2")
    }
}
