import Foundation
import Testing
import TestSupport

extension GapProof {
    /// What one run of the proof did.
    struct Outcome: Sendable {
        var writes: [CommittedWrite]
        var runs: Int
        var checks: InvariantChecks
        var followed: [Follower]
    }

    /// Runs the proof: `writersPerLedger` writers and `followersPerLedger` followers in each ledger, the
    /// extra sequencer and two invariant checkers, until the writers have done enough and every follower has
    /// drained its ledger's feed. Writer numbers run across ledgers, so no two writers name a note alike.
    func run(servers: [ServerProcess], writersPerLedger: Int, followersPerLedger: Int) async throws -> Outcome {
        async let sequencerRuns = advanceInSmallBatches()
        async let invariantChecks = checkInvariant(connections: 2)
        async let follows = withThrowingTaskGroup(of: Follower.self) { group in
            for (index, ledger) in ledgers.enumerated() {
                for number in 0..<followersPerLedger {
                    let first = (index * followersPerLedger + number) % servers.count
                    group.addTask { try await self.follow(ledger, servers: servers, startingWith: first) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let writes: [CommittedWrite]
        do {
            writes = try await withThrowingTaskGroup(of: [CommittedWrite].self) { group in
                for (index, ledger) in ledgers.enumerated() {
                    for number in 0..<writersPerLedger {
                        group.addTask { try await self.write(as: index * writersPerLedger + number, in: ledger.id) }
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        } catch {
            // The checkers and followers run until the writers are done, failed ones included.
            writersDone.withLock { $0 = true }
            throw error
        }
        writersDone.withLock { $0 = true }
        let (runs, checks, followed) = try await (sequencerRuns, invariantChecks, follows)
        return Outcome(writes: writes, runs: runs, checks: checks, followed: followed)
    }

    /// The proof's checks on what a run did, per ledger: enough done without a stall, no snapshot with a gap,
    /// each ledger's seqs stamped exactly once each from 1 to its last_seq, and each follower saw every record
    /// of its ledger at its final state, none of another ledger, seqs only going up, and no write at or below
    /// a cursor its ledger's followers had been answered before the write committed. Answers the summary line.
    func expectComplete(_ outcome: Outcome, writers: Int) async throws -> String {
        let done = progress.withLock { $0 }
        #expect(
            done.transactions >= enough.transactions && done.checks >= enough.checks,
            "a stall: \(done.transactions) transactions and \(done.checks) invariant checks before the deadline")
        #expect(outcome.checks.violations.isEmpty, "snapshots broke count = max = last_seq: \(outcome.checks.violations.prefix(5))")
        #expect(outcome.runs > 0)
        #expect(try await Self.scalar(url, "SELECT count(*) FROM change_log WHERE seq IS NULL") == "0")
        var lastSeqs: [Int64: String] = [:]
        for ledger in ledgers {
            let lastSeq = try await Self.scalar(url, "SELECT last_seq FROM change_feed_state WHERE ledger_id = \(ledger.id)")
            lastSeqs[ledger.id] = lastSeq
            #expect(
                try await Self.scalar(
                    url, "SELECT count(*) || '/' || min(seq) || '/' || max(seq) FROM change_seq_audit WHERE ledger_id = \(ledger.id)")
                    == "\(lastSeq ?? "?")/1/\(lastSeq ?? "?")",
                "every seq of ledger \(ledger.id) from 1 up to its last_seq was stamped exactly once")
        }

        let expected = try await Self.finalStates(url, deletions: outcome.writes)
        for ledger in ledgers {
            #expect(
                expected.keys.filter { $0.ledger == ledger.id }.count > writers / ledgers.count * 10,
                "ledger \(ledger.id) was written")
        }
        for follower in outcome.followed {
            let mine = expected.filter { $0.key.ledger == follower.ledger }
            #expect(follower.orderViolations.isEmpty, "seqs went back in ledger \(follower.ledger): \(follower.orderViolations.prefix(5))")
            let wrong = mine.filter { key, state in follower.seen[key].map { $0.state != state } ?? true }
            let example = wrong.first.map { "\($0)" } ?? ""
            #expect(wrong.isEmpty, "\(wrong.count) records of ledger \(follower.ledger) not seen at their final state, e.g. \(example)")
            // Ids and note names are unique across ledgers but for the hot category (id 1 in each): a change of
            // another ledger in this feed is a key this ledger never held.
            let foreign = follower.seen.keys.filter { mine[$0] == nil }
            #expect(foreign.isEmpty, "\(foreign.count) records in ledger \(follower.ledger)'s feed that are not its own: \(foreign.prefix(5))")
            // The direct proof: a write that committed after a follower had been answered lastSeq = C appears
            // above C, so following the feed from C cannot have skipped it.
            var early: [String] = []
            for write in outcome.writes where write.key.ledger == follower.ledger {
                guard let seen = follower.seen[write.key], seen.state == write.state else { continue }
                if seen.seq <= write.cursorBeforeCommit {
                    early.append("\(write.key) v\(write.state.version) at seq \(seen.seq) ≤ cursor \(write.cursorBeforeCommit)")
                }
            }
            #expect(early.isEmpty, "\(early.count) writes appeared at or below a cursor read before they committed: \(early.prefix(5))")
        }
        let lastSeqText = ledgers.map { "ledger \($0.id) \(lastSeqs[$0.id].flatMap { $0 } ?? "?")" }.joined(separator: ", ")
        return "\(outcome.writes.count) committed transactions by \(writers) writers, \(outcome.runs) small sequencer runs, "
            + "\(outcome.checks.count) invariant checks, \(outcome.followed.map(\.pages)) pages followed, last_seq \(lastSeqText)"
    }
}
