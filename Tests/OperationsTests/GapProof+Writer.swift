import Foundation
import Postgres
import TestSupport

extension GapProof {
    /// One writer in `ledger` until the proof has enough (`shouldStopWriting`): transactions of one to three
    /// writes (inserts, updates and deletes of transactions, categories, with cascades, and notes; some on
    /// the ledger's one hot category), half of them REPEATABLE READ with retries, most held open a while after
    /// writing so that commits land out of write order, a few rolled back. Answers each committed
    /// transaction's final state per record.
    func write(as writer: Int, in ledger: Int64 = 1) async throws -> [CommittedWrite] {
        try await runOffCooperativePool { [self] in
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            var mine = WriterRecords(writer: writer, ledger: ledger)
            var committed: [CommittedWrite] = []
            var random = SystemRandomNumberGenerator()
            while !shouldStopWriting {
                let isRepeatableRead = Bool.random(using: &random)
                let steps = Int.random(in: 1...3, using: &random)
                let rolls = (0..<steps).map { _ in Double.random(in: 0..<1, using: &random) }
                let holdRoll = Double.random(in: 0..<1, using: &random)
                let hold: Duration =
                    holdRoll < 0.01
                    ? .seconds(2)
                    : holdRoll < 0.11
                        ? .milliseconds(Int.random(in: 200...800, using: &random))
                        : holdRoll < 0.71 ? .milliseconds(Int.random(in: 0...20, using: &random)) : .zero
                let rollsBack = Double.random(in: 0..<1, using: &random) < 0.05
                // Run again from scratch when REPEATABLE READ loses a race (40001), as the server does.
                for _ in 1...10 {
                    var planned = mine
                    var written: [Key: State] = [:]
                    do {
                        try connection.execute(script: isRepeatableRead ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN")
                        for roll in rolls { try planned.step(roll, on: connection, into: &written, random: &random) }
                        if hold > .zero {
                            Thread.sleep(
                                forTimeInterval: Double(hold.components.attoseconds) / 1e18
                                    + Double(hold.components.seconds))
                        }
                        if rollsBack {
                            try connection.execute(script: "ROLLBACK")
                            break
                        }
                        let cursorBeforeCommit = cursors.withLock { $0[ledger] ?? 0 }
                        try connection.execute(script: "COMMIT")
                        mine = planned
                        progress.withLock { $0.transactions += 1 }
                        committed += written.map { CommittedWrite(key: $0.key, state: $0.value, cursorBeforeCommit: cursorBeforeCommit) }
                        break
                    } catch let error as PostgresError
                        where error.sqlState == .serializationFailure || error.sqlState == .deadlockDetected
                    {
                        // After ten lost races the transaction is given up, as a rolled-back one.
                        try connection.execute(script: "ROLLBACK")
                    }
                }
            }
            return committed
        }
    }
}

/// What one writer owns in its ledger: its category, its transactions and its notes, each with its current
/// version. Every statement names the ledger: the hot category is id 1 in each ledger of the proof.
struct WriterRecords {
    let writer: Int
    let ledger: Int64
    var category: (id: Int64, version: Int)?
    var transactions: [Int64: Int] = [:]
    var notes: [String: Int] = [:]
    var counter = 0

    init(writer: Int, ledger: Int64) {
        self.writer = writer
        self.ledger = ledger
    }

    /// Unique across ledgers too (writer numbers are the proof's), so a note seen in another ledger's feed
    /// cannot pass for one of that ledger.
    private mutating func nextName(_ kind: String) -> String {
        counter += 1
        return "w\(writer)-\(kind)\(counter)"
    }

    /// One write chosen by `roll`, recorded in `written` by the state the database answered.
    mutating func step(
        _ roll: Double, on connection: Connection, into written: inout [GapProof.Key: GapProof.State],
        random: inout SystemRandomNumberGenerator
    ) throws {
        func record(_ collection: String, _ id: String, _ op: String, _ version: Int) {
            written[GapProof.Key(ledger: ledger, collection: collection, id: id)] = GapProof.State(op: op, version: version)
        }
        guard let category else {
            let name = nextName("c")
            let row = try connection.query("INSERT INTO categories (ledger_id, title, amount) VALUES (\(ledger), \(name), 1) RETURNING id, version")[
                0]
            self.category = (try row.decode(Int64.self, at: 0), try row.decode(Int.self, at: 1))
            record("categories", "\(try row.decode(Int64.self, at: 0))", "upsert", try row.decode(Int.self, at: 1))
            return
        }
        switch roll {
        case ..<0.25:
            let owner: Int64 = Bool.random(using: &random) ? 1 : category.id
            let row = try connection.query(
                """
                INSERT INTO transactions (ledger_id, category_id, title, amount) VALUES (\(ledger), \(owner), \(nextName("t")), 1) RETURNING id, version
                """)[0]
            let id = try row.decode(Int64.self, at: 0)
            if owner == category.id { transactions[id] = try row.decode(Int.self, at: 1) }
            record("transactions", "\(id)", "upsert", try row.decode(Int.self, at: 1))
        case ..<0.40:
            guard let id = transactions.keys.randomElement(using: &random) else { return }
            let version = try connection.query(
                "UPDATE transactions SET version = version + 1, amount = amount + 1 WHERE ledger_id = \(ledger) AND id = \(id) RETURNING version")[0]
                .decode(Int.self, at: 0)
            transactions[id] = version
            record("transactions", "\(id)", "upsert", version)
        case ..<0.48:
            guard let id = transactions.keys.randomElement(using: &random) else { return }
            let version = try connection.query("DELETE FROM transactions WHERE ledger_id = \(ledger) AND id = \(id) RETURNING version")[0].decode(
                Int.self, at: 0)
            transactions[id] = nil
            record("transactions", "\(id)", "delete", version)
        case ..<0.62:
            let note = nextName("n")
            try connection.execute(
                "INSERT INTO documents (ledger_id, collection, id, body) VALUES (\(ledger), 'notes', \(note), json_build_object('id', \(note)::text))"
            )
            notes[note] = 1
            record("notes", note, "upsert", 1)
        case ..<0.72:
            guard let note = notes.keys.randomElement(using: &random) else { return }
            let version = try connection.query(
                """
                UPDATE documents SET version = version + 1, body = json_build_object('id', \(note)::text, 'n', version)
                WHERE ledger_id = \(ledger) AND collection = 'notes' AND id = \(note) RETURNING version
                """)[0].decode(Int.self, at: 0)
            notes[note] = version
            record("notes", note, "upsert", version)
        case ..<0.78:
            guard let note = notes.keys.randomElement(using: &random) else { return }
            let version = try connection.query(
                "DELETE FROM documents WHERE ledger_id = \(ledger) AND collection = 'notes' AND id = \(note) RETURNING version")[0].decode(
                    Int.self, at: 0)
            notes[note] = nil
            record("notes", note, "delete", version)
        case ..<0.90:
            // The hot record: every writer updates it, so its change row is contended by writers and runs.
            let version = try connection.query(
                "UPDATE categories SET version = version + 1, amount = amount + 1 WHERE ledger_id = \(ledger) AND id = 1 RETURNING version")[0]
                .decode(Int.self, at: 0)
            record("categories", "1", "upsert", version)
        case ..<0.96:
            let version = try connection.query(
                "UPDATE categories SET version = version + 1 WHERE ledger_id = \(ledger) AND id = \(category.id) RETURNING version")[0].decode(
                    Int.self, at: 0)
            self.category = (category.id, version)
            record("categories", "\(category.id)", "upsert", version)
        default:
            // The cascade deletes the category's transactions; their tombstones come from the trigger.
            let version = try connection.query("DELETE FROM categories WHERE ledger_id = \(ledger) AND id = \(category.id) RETURNING version")[0]
                .decode(Int.self, at: 0)
            record("categories", "\(category.id)", "delete", version)
            for (id, transactionVersion) in transactions { record("transactions", "\(id)", "delete", transactionVersion) }
            transactions = [:]
            self.category = nil
        }
    }
}
