import BudgetAPI
import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport
import APITestSupport

/// The no-gap proof of docs/change-feed.md: concurrent writers whose transactions commit out of order, against a
/// poller that only ever passes `lastSeq` back; in the end it must have seen every record's final state.
@Suite struct SyncConcurrencyTests {
    static let writers = 8
    static let transactionsPerWriter = 50

    /// A record's identity in the feed and what a writer last left it as.
    struct Key: Hashable, Sendable {
        var collection: String
        var id: String
    }

    /// Flags and tallies shared between the writers and the poller.
    final class Shared: Sendable {
        let writersDone = Mutex(false)
    }

    @Test func aPollerFollowingLastSeqSeesEveryCommittedChange() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            _ = try await app.scalar("INSERT INTO categories (ledger_id, id, title, amount) VALUES (1, 1, 'Shared', 1) RETURNING id")
            _ = try await app.scalar("INSERT INTO collections (ledger_id, name, kind) VALUES (1, 'notes', 'plural') RETURNING name")
            let shared = Shared()
            async let polled = Self.poll(app, until: shared)
            let deleted = try await withThrowingTaskGroup(of: [Key: RecordState].self) { group in
                for writer in 0..<Self.writers {
                    group.addTask { try await Self.write(as: writer, url: app.databaseURL) }
                }
                return try await group.reduce(into: [:]) { $0.merge($1) { first, _ in first } }
            }
            shared.writersDone.withLock { $0 = true }
            let (seen, changeCount) = try await polled

            var expected = try await Self.liveRecords(url: app.databaseURL)
            expected.merge(deleted) { live, _ in live }
            #expect(expected.count > Self.writers * 10)
            var missing: [String] = []
            for (key, state) in expected where seen[key].map({ $0.op != state.op || $0.version != state.version }) ?? true {
                missing.append("\(key.collection)/\(key.id): expected \(state), saw \(String(describing: seen[key]))")
            }
            #expect(missing.isEmpty, "\(missing.count) records not seen at their final state: \(missing.prefix(5))")
            #expect(changeCount >= expected.count)
            print(
                "no-gap proof: \(Self.writers) writers × \(Self.transactionsPerWriter) transactions; "
                    + "\(changeCount) changes polled, \(expected.count) records checked (\(deleted.count) deleted)")
        }
    }

    /// The case the design exists for, made deterministic: a transaction writes first, another writes
    /// and commits, a poller reads past the second, and only then does the first commit.
    @Test func aTransactionThatWroteFirstButCommitsLastIsNotSkipped() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            // One thread holds both connections (they are not Sendable); expectations are checked back here.
            let (firstCount, second) = try await runOffCooperativePool { [url = app.databaseURL, port = app.port] in
                let slow = try Connection.connect(to: url)
                let fast = try Connection.connect(to: url)
                defer { slow.close(); fast.close() }
                try slow.execute(script: "BEGIN; INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'slow', 1)")
                try fast.execute(script: "INSERT INTO categories (ledger_id, title, amount) VALUES (1, 'fast', 1)")
                let first = try TestClient(port: port).request("GET", "/changes").object
                let lastSeq = (first["lastSeq"] as? NSNumber)?.int64Value ?? -1
                try slow.execute(script: "COMMIT")
                let second = try TestClient(port: port).request("GET", "/changes?since=\(lastSeq)").text
                return ((first["changes"] as? [Any])?.count ?? -1, second)
            }
            #expect(firstCount == 1, "only the committed write is visible at first")
            #expect(second.contains(#""title":"slow""#), "the late commit comes after lastSeq: \(second)")
        }
    }

    /// Polls `/changes` with small pages, checking that seqs only ever grow, until the writers are done
    /// and the feed is drained; answers each record's last seen (op, version) and how many changes came.
    static func poll(_ app: TestApp, until shared: Shared) async throws -> ([Key: RecordState], Int) {
        var since: Int64 = 0
        var seen: [Key: RecordState] = [:]
        var count = 0
        var lastSeq: Int64 = 0
        let deadline = ContinuousClock.now + .seconds(90)
        while true {
            // A writer that failed cancels this task; a poll that never drains must not hang the suite.
            try Task.checkCancellation()
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            let isFinal = shared.writersDone.withLock { $0 }
            let page = try await app.changes("since=\(since)&limit=50")
            for change in page.changes {
                let seq = (change["seq"] as? NSNumber)?.int64Value ?? -1
                #expect(seq > lastSeq, "seqs strictly increase across pages")
                lastSeq = seq
                let id = (change["id"] as? NSNumber)?.stringValue ?? change["id"] as? String ?? "?"
                let key = Key(collection: change["collection"] as? String ?? "?", id: id)
                seen[key] = RecordState(op: change["op"] as? String ?? "?", version: change["version"] as? Int ?? -1)
                count += 1
            }
            #expect(page.lastSeq >= since)
            since = page.lastSeq
            // Only a read that started after the writers finished and found nothing more ends the poll.
            if isFinal && !page.hasMore && page.changes.isEmpty { return (seen, count) }
        }
    }

    struct RecordState: Hashable, Sendable, CustomStringConvertible {
        var op: String
        var version: Int
        var description: String { "\(op) v\(version)" }
    }

    /// One writer's transactions: inserts, updates and deletes of its own transactions and notes, some
    /// two records at a time, many held open a few milliseconds so that commits land out of order.
    /// Answers the records it deleted, with the version each had.
    static func write(as writer: Int, url: String) async throws -> [Key: RecordState] {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var generator = SystemRandomNumberGenerator()
            var transactions: [Int64] = []
            var notes: [String] = []
            var deleted: [Key: RecordState] = [:]
            for step in 0..<transactionsPerWriter {
                try connection.transaction { connection in
                    switch step % 5 {
                    case 0, 1:
                        let id = try connection.query(
                            """
                            INSERT INTO transactions (ledger_id, category_id, title, amount) VALUES (1, 1, \("w\(writer)-\(step)"), 1) RETURNING id
                            """)[0].decode(Int64.self, at: 0)
                        transactions.append(id)
                        let note = "w\(writer)-\(step)"
                        try connection.execute(
                            "INSERT INTO documents (ledger_id, collection, id, body) VALUES (1, 'notes', \(note), json_build_object('id', \(note)::text))"
                        )
                        notes.append(note)
                    case 2, 3:
                        if let id = transactions.randomElement(using: &generator) {
                            try connection.execute("UPDATE transactions SET version = version + 1, title = \("u\(step)") WHERE id = \(id)")
                        }
                        if let note = notes.randomElement(using: &generator) {
                            try connection.execute(
                                "UPDATE documents SET version = version + 1, body = json_build_object('id', \(note)::text, 'step', \(step)::integer) WHERE collection = 'notes' AND id = \(note)"
                            )
                        }
                    default:
                        if !transactions.isEmpty {
                            let id = transactions.remove(at: Int.random(in: 0..<transactions.count, using: &generator))
                            let version = try connection.query("DELETE FROM transactions WHERE id = \(id) RETURNING version")[0]
                                .decode(Int.self, at: 0)
                            deleted[Key(collection: "transactions", id: "\(id)")] = RecordState(op: "delete", version: version)
                        }
                    }
                    // Held open after writing: a transaction that wrote first may commit last.
                    if Bool.random(using: &generator) { usleep(UInt32.random(in: 0...15_000, using: &generator)) }
                }
            }
            return deleted
        }
    }

    /// Every live record as the database holds it now, read straight from the tables (not the log).
    static func liveRecords(url: String) async throws -> [Key: RecordState] {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var state: [Key: RecordState] = [:]
            let rows = try connection.query(
                """
                SELECT 'categories', id::text, version FROM categories
                UNION ALL SELECT 'transactions', id::text, version FROM transactions
                UNION ALL SELECT collection, id, version FROM documents
                """)
            for row in rows {
                let key = Key(collection: try row.decode(String.self, at: 0), id: try row.decode(String.self, at: 1))
                state[key] = RecordState(op: "upsert", version: try row.decode(Int.self, at: 2))
            }
            return state
        }
    }
}
