import Foundation
import Postgres
import Testing
import TestSupport

/// `kill -9` of the real server in the middle of a write storm, then a crash of PostgreSQL itself: every
/// write the server acknowledged must still be there, no atomic batch may be half applied, and the server
/// must start again on the same data, where retrying the cut-off writes with their keys applies each once.
@Suite struct CrashSafetyTests {
    private static let clients = 8
    private static let acknowledgedBeforeKill = 200

    @Test func killingTheServerMidStormLosesNoAcknowledgedWriteAndHalfAppliesNoBatch() async throws {
        // synchronous_commit=on, PostgreSQL's default, which the embedded cluster keeps: COMMIT returns only
        // once its WAL is written, so a crash of PostgreSQL loses no committed transaction. fsync=off only
        // gives up safety against a crash of the operating system, which a test cannot cause.
        let database = try await ScratchCluster.start(settings: ["fsync": "off", "synchronous_commit": "on"])
        do {
            try await crashDuringStorm(database)
        } catch {
            await database.remove()
            throw error
        }
        await database.remove()
    }

    private func crashDuringStorm(_ database: ScratchCluster) async throws {
        let server = try await ServerProcess.start(["--database-url", database.databaseURL])
        let category = try await server.request("POST", "/categories", json: #"{"title":"Storm","amount":100}"#)
        let categoryID = try #require(category.recordID, "\(category.status) \(category.text)")

        let storm = WriteStorm(port: server.port, categoryID: categoryID)
        let control = WriteStorm.Control()
        let clients = Task {
            try await withThrowingTaskGroup(of: [WriteStorm.Write].self) { group in
                for number in 0..<Self.clients {
                    group.addTask { try await runOffCooperativePool { storm.client(number, control: control) } }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }
        do {
            try await waitUntil("the clients have \(Self.acknowledgedBeforeKill) acknowledged writes", timeout: .seconds(60)) {
                control.acknowledged >= Self.acknowledgedBeforeKill || !server.process.isRunning
            }
            #expect(server.process.isRunning, "the server died on its own:\n\(server.process.outputTail())")
        } catch {
            control.stop()
            _ = try? await clients.value
            throw error
        }
        try await server.process.kill()  // SIGKILL, with writes in flight
        control.stop()
        let writes = try await clients.value
        // And PostgreSQL crashes too (immediate shutdown: no checkpoint); it starts again with crash recovery.
        try await database.crash()
        try await database.startAgain()

        let afterCrash = try await StoredRecords.read(database.databaseURL)
        let report = CrashReport(writes: writes, stored: afterCrash)
        print("crash safety: \(report)")
        #expect(report.unanswered > 0, "the kill found no write in flight, so it proved less than it should")
        #expect(report.lost.isEmpty, "acknowledged writes missing or different after the crash: \(report.lost.prefix(10))")
        #expect(report.partialBatches.isEmpty, "half-applied batches: \(report.partialBatches.prefix(10))")
        #expect(report.duplicated.isEmpty, "writes applied more than once: \(report.duplicated.prefix(10))")

        // The server starts again on the same data and works.
        let restarted = try await ServerProcess.start(["--database-url", database.databaseURL])
        let read = try await restarted.request("GET", "/categories/\(categoryID)")
        #expect(read.status == 200 && read.object["title"] as? String == "Storm", "\(read.status) \(read.text)")
        let fresh = try await restarted.request("POST", "/transactions", json: #"{"categoryId":\#(categoryID),"title":"after restart","amount":1}"#)
        #expect(fresh.status == 201, "\(fresh.text)")

        // A client retries what it got no answer for, with the same keys: each write then exists exactly once,
        // whether it had committed before the crash (its answer is replayed) or not (it runs now).
        var replayed = 0
        var retried = writes.filter { !$0.isAcknowledged }
        for index in retried.indices {
            let write = retried[index]
            let response = try await restarted.request("POST", write.path, json: write.body, headers: [("Idempotency-Key", write.key)])
            #expect((200..<300).contains(response.status), "retry of \(write.marker): \(response.status) \(response.text)")
            retried[index].status = response.status
            retried[index].ids = WriteStorm.ids(in: response, kind: write.kind)
            if response.header("Idempotent-Replayed") == "true" { replayed += 1 }
        }
        let afterRetries = try await StoredRecords.read(database.databaseURL)
        let settled = CrashReport(writes: writes.filter(\.isAcknowledged) + retried, stored: afterRetries)
        print(
            "crash safety: retried \(retried.count) unacknowledged writes with their keys: \(replayed) replayed, "
                + "\(retried.count - replayed) applied now; afterwards \(settled)")
        #expect(settled.lost.isEmpty, "after retries: \(settled.lost.prefix(10))")
        #expect(settled.acknowledged == writes.count, "every write is acknowledged once retried")
        #expect(settled.partialBatches.isEmpty && settled.duplicated.isEmpty)
        #expect(settled.batchesNone == 0, "every batch is applied once retried")
        #expect(restarted.process.isRunning)
    }
}

/// The storm's rows as PostgreSQL holds them, keyed by title.
struct StoredRecords: Sendable {
    struct Transaction: Sendable, Equatable {
        let id: Int64
        let amount: String
        let categoryID: Int64
    }

    var transactions: [String: [Transaction]] = [:]
    var categories: [String: [Int64]] = [:]

    static func read(_ url: String) async throws -> StoredRecords {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var stored = StoredRecords()
            let transactions = try connection.query("SELECT title, id, amount::text, category_id FROM transactions")
            for index in 0..<transactions.count {
                let row = transactions[index]
                stored.transactions[try row.decode(String.self, at: 0), default: []].append(
                    Transaction(
                        id: try row.decode(Int64.self, at: 1), amount: try row.decode(String.self, at: 2),
                        categoryID: try row.decode(Int64.self, at: 3)))
            }
            let categories = try connection.query("SELECT title, id FROM categories")
            for index in 0..<categories.count {
                stored.categories[try categories[index].decode(String.self, at: 0), default: []]
                    .append(try categories[index].decode(Int64.self, at: 1))
            }
            return stored
        }
    }
}

/// What the database holds of each write, compared with what the server answered.
struct CrashReport: CustomStringConvertible {
    var acknowledged = 0, acknowledgedFound = 0
    var acknowledgedSingles = 0, acknowledgedBatches = 0
    /// Sent and never answered: in flight when the server died.
    var unanswered = 0, unansweredCommitted = 0
    /// Answered with an error status (not a write).
    var refused = 0
    var batchesComplete = 0, batchesNone = 0
    var lost: [String] = [], partialBatches: [String] = [], duplicated: [String] = []

    init(writes: [WriteStorm.Write], stored: StoredRecords) {
        for write in writes {
            let titles = write.titles
            let rows = titles.transactions.map { stored.transactions[$0] ?? [] }
            let categoryRows = titles.category.map { stored.categories[$0] ?? [] }
            let counts = rows.map(\.count) + (categoryRows.map { [$0.count] } ?? [])
            if counts.contains(where: { $0 > 1 }) { duplicated.append(write.marker) }
            let isComplete = counts.allSatisfy { $0 == 1 }
            let isNone = counts.allSatisfy { $0 == 0 }
            if write.kind == .batch {
                if isComplete { batchesComplete += 1 } else if isNone { batchesNone += 1 } else { partialBatches.append("\(write.marker) \(counts)") }
            }
            if write.isAcknowledged {
                acknowledged += 1
                if write.kind == .single { acknowledgedSingles += 1 } else { acknowledgedBatches += 1 }
                if isComplete && Self.matches(write, rows: rows.map { $0[0] }, category: categoryRows?.first) {
                    acknowledgedFound += 1
                } else {
                    lost.append("\(write.marker) ids \(write.ids) rows \(rows) categories \(categoryRows ?? [])")
                }
            } else if write.status == nil {
                unanswered += 1
                if isComplete { unansweredCommitted += 1 }
            } else {
                refused += 1
            }
        }
    }

    /// Whether the stored rows are the ones the server acknowledged: same ids, amounts and category.
    private static func matches(_ write: WriteStorm.Write, rows: [StoredRecords.Transaction], category: Int64?) -> Bool {
        guard rows.map(\.amount) == write.amounts else { return false }
        switch write.kind {
        case .single:
            return write.ids == [rows[0].id]
        case .batch:
            guard let category, category == write.chosenCategoryID else { return false }
            return write.ids == [category] + rows.map(\.id) && rows.allSatisfy { $0.categoryID == category }
        }
    }

    var description: String {
        "acknowledged \(acknowledged) (\(acknowledgedSingles) transactions, \(acknowledgedBatches) batches), "
            + "found \(acknowledgedFound), lost \(lost.count); in flight at the kill \(unanswered) "
            + "(committed \(unansweredCommitted), not \(unanswered - unansweredCommitted)); refused \(refused); "
            + "batches complete \(batchesComplete), none \(batchesNone), partial \(partialBatches.count); "
            + "duplicated \(duplicated.count)"
    }
}
