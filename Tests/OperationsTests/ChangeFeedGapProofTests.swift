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
        let servers = [
            try await ServerProcess.start(["--database-url", url]),
            try await ServerProcess.start(["--database-url", url]),
        ]
        try await GapProof.seed(url)
        let proof = GapProof(url: url, enough: Self.enough, within: Self.writingLimit)
        let outcome = try await proof.run(servers: servers, writersPerLedger: Self.writers, followersPerLedger: Self.followers)
        print("gap proof: " + (try await proof.expectComplete(outcome, writers: Self.writers)))
    }

    /// The proof in two ledgers at once (docs/households.md, The change feed, per ledger): ledger 1, which had
    /// a feed before the second ledger existed, and a new ledger whose hot category is id 1 too, each written
    /// by its own writers and followed by its own members' readers (`/changes` and `/ledgers/{L}/changes`).
    /// Each ledger's seqs are dense from 1, ledger 1 goes on from its own numbers, and no change of one
    /// ledger reaches the other's feed.
    @Test func twoLedgersEachKeepADenseFeedOfTheirOwn() async throws {
        let url = try await TestDatabase.fresh()
        try await GapProof.installAudit(url)
        // Another ledger is 404 without users: members with tokens follow the feeds.
        let servers = [
            try await ServerProcess.start(["--database-url", url, "--signup", "open"]),
            try await ServerProcess.start(["--database-url", url, "--signup", "open"]),
        ]
        try await GapProof.seed(url)
        try await GapProof.execute(
            url,
            """
            INSERT INTO categories (ledger_id, title, amount) SELECT 1, 'Before ' || g, 1 FROM generate_series(1, 20) g;
            SELECT advance_change_feed();
            """)
        let ledger1Before = try #require(
            try await GapProof.scalar(url, "SELECT last_seq FROM change_feed_state WHERE ledger_id = 1")
                .flatMap { Int64($0) })
        #expect(ledger1Before == 21)

        // The first user owns ledger 1; the second gets a new, empty ledger.
        let owner1 = try await Self.member("alice", on: servers[0])
        let owner2 = try await Self.member("bob", on: servers[1])
        let second = try #require(
            try await GapProof.scalar(url, "SELECT default_ledger_id FROM users WHERE name = 'bob'")
                .flatMap { Int64($0) })
        #expect(second != 1)
        #expect(try await GapProof.scalar(url, "SELECT last_seq FROM change_feed_state WHERE ledger_id = \(second)") == "0")
        try await GapProof.seed(url, ledger: second)

        let ledgers = [
            GapProof.Ledger(id: 1, headers: owner1),
            GapProof.Ledger(id: second, prefix: "/ledgers/\(second)", headers: owner2),
        ]
        let proof = GapProof(url: url, ledgers: ledgers, enough: Self.enough, within: Self.writingLimit)
        let writersPerLedger = Self.writers / 2
        let outcome = try await proof.run(servers: servers, writersPerLedger: writersPerLedger, followersPerLedger: 2)
        let summary = try await proof.expectComplete(outcome, writers: writersPerLedger * ledgers.count)

        // Ledger 1 went on from its own numbers: the categories no writer touched keep the seqs they had before
        // the second ledger existed, and every change of the proof is above them.
        for follower in outcome.followed where follower.ledger == 1 {
            let before = (2...21).map { GapProof.Key(ledger: 1, collection: "categories", id: "\($0)") }
            #expect(before.map { follower.seen[$0]?.seq } == (2...21).map { Int64($0) }, "ledger 1's seqs from before")
            let below = follower.seen.filter { $0.value.seq <= ledger1Before && !before.contains($0.key) }
            #expect(below.isEmpty, "writes of the proof at seqs ledger 1 had before: \(below.prefix(5))")
        }
        // The database agrees: every logged change is of a record its ledger holds or held.
        #expect(
            try await GapProof.scalar(
                url,
                """
                SELECT count(*) FROM change_log l WHERE l.op = 'upsert' AND NOT EXISTS (
                    SELECT 1 FROM categories c WHERE l.collection = 'categories' AND c.ledger_id = l.ledger_id AND c.id::text = l.record_key
                    UNION ALL SELECT 1 FROM transactions t WHERE l.collection = 'transactions' AND t.ledger_id = l.ledger_id AND t.id::text = l.record_key
                    UNION ALL SELECT 1 FROM documents d WHERE d.collection = l.collection AND d.ledger_id = l.ledger_id AND d.id = l.record_key)
                """) == "0")
        print("gap proof in two ledgers: " + summary)
    }

    /// Signs `name` up (the first user owns ledger 1, a later one a new ledger of their own) and logs in:
    /// the headers that carry the token.
    private static func member(_ name: String, on server: ServerProcess) async throws -> [(String, String)] {
        let credentials = #"{"name":"\#(name)","password":"correct horse \#(name)"}"#
        let created = try await server.request("POST", "/auth/users", json: credentials)
        guard created.status == 201 else { throw UnexpectedAnswer(description: "POST /auth/users answered \(created.status): \(created.text)") }
        let login = try await server.request("POST", "/auth/tokens", json: credentials)
        guard login.status == 201, let token = (try login.json() as? [String: Any])?["token"] as? String else {
            throw UnexpectedAnswer(description: "POST /auth/tokens answered \(login.status): \(login.text)")
        }
        return [("Authorization", "Bearer \(token)")]
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
            try await GapProof.scalar(
                url,
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'SELECT stamped, touched FROM stamp_change_feed%' AND wait_event_type = 'Lock'
                """) == "1"
        }
        let terminated = try await GapProof.scalar(
            url,
            """
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
