import Foundation
import Synchronization
import TestSupport

/// Concurrent clients writing as fast as the server answers, each write with its own `Idempotency-Key`,
/// recording what was sent and what was acknowledged, until the server goes away.
///
/// Half the writes are single `POST /transactions`; the other half are atomic `POST /batch`es of three
/// dependent operations: a category with an id the client chose, then two transactions in it. Every
/// record's title names the write it belongs to, so the database can be searched for each one afterwards.
struct WriteStorm: Sendable {
    /// One write as a client sent it.
    struct Write: Sendable {
        enum Kind: Sendable { case single, batch }

        let kind: Kind
        /// The single transaction's title, or the batch's category title (its transactions add "-1", "-2").
        let marker: String
        let key: String
        let path: String
        let body: String
        /// The transaction amounts, as PostgreSQL prints numeric(14,2).
        let amounts: [String]
        /// The category id a batch chose for its category.
        let chosenCategoryID: Int64?
        /// The answer's status; nil when the connection broke before an answer came.
        var status: Int?
        /// The acknowledged ids: [transaction], or [category, transaction, transaction] for a batch.
        var ids: [Int64] = []

        var isAcknowledged: Bool { status.map { (200..<300).contains($0) } ?? false }

        /// The titles of the rows this write creates.
        var titles: (category: String?, transactions: [String]) {
            kind == .single ? (nil, [marker]) : (marker, [marker + "-1", marker + "-2"])
        }
    }

    /// Shared between the test and its client threads.
    final class Control: Sendable {
        private let acknowledgedCount = Atomic<Int>(0)
        private let stopped = Atomic<Bool>(false)

        var acknowledged: Int { acknowledgedCount.load(ordering: .relaxed) }
        var isStopped: Bool { stopped.load(ordering: .relaxed) }
        func stop() { stopped.store(true, ordering: .relaxed) }
        func countAcknowledged() { acknowledgedCount.add(1, ordering: .relaxed) }
    }

    let port: Int
    /// The category the single writes go to.
    let categoryID: Int64

    /// One client's loop, blocking: writes until stopped or until the server refuses connections.
    func client(_ number: Int, control: Control) -> [Write] {
        var writes: [Write] = []
        var connection: TestClient?
        var sequence = 0
        while !control.isStopped {
            sequence += 1
            var write = makeWrite(client: number, sequence: sequence)
            if connection == nil {
                // Refused: the server is gone, and this write was never sent.
                guard let fresh = try? TestClient(port: port, timeout: .seconds(30)) else { break }
                connection = fresh
            }
            do {
                let response = try connection!.request("POST", write.path, json: write.body, headers: [("Idempotency-Key", write.key)])
                write.status = response.status
                write.ids = Self.ids(in: response, kind: write.kind)
                if write.isAcknowledged { control.countAcknowledged() }
                if response.header("Connection")?.lowercased() == "close" { connection = nil }
            } catch {
                // Sent (at least in part) and never answered: the server died with it in flight.
                connection = nil
            }
            writes.append(write)
        }
        return writes
    }

    func makeWrite(client: Int, sequence: Int) -> Write {
        let marker = "c\(client)-w\(sequence)"
        let key = "storm-\(marker)-\(UUID().uuidString)"
        let cents = String(format: "%02d", sequence % 100)
        if sequence % 2 == 1 {
            let amount = "\(client).\(cents)"
            return Write(
                kind: .single, marker: marker, key: key, path: "/transactions",
                body: #"{"categoryId":\#(categoryID),"title":"\#(marker)","amount":\#(amount)}"#,
                amounts: [amount], chosenCategoryID: nil)
        }
        let category = Int64(1_000_000 + client * 100_000 + sequence)
        let amounts = ["1\(client).\(cents)", "2\(client).\(cents)"]
        let body = """
            {"atomic":true,"operations":[\
            {"method":"POST","path":"/categories","body":{"id":\(category),"title":"\(marker)","amount":100}},\
            {"method":"POST","path":"/categories/\(category)/transactions","body":{"title":"\(marker)-1","amount":\(amounts[0])}},\
            {"method":"POST","path":"/categories/\(category)/transactions","body":{"title":"\(marker)-2","amount":\(amounts[1])}}]}
            """
        return Write(kind: .batch, marker: marker, key: key, path: "/batch", body: body, amounts: amounts, chosenCategoryID: category)
    }

    /// The ids an acknowledged answer reports: the created record's, or each batch operation's.
    static func ids(in response: TestResponse, kind: Write.Kind) -> [Int64] {
        guard (200..<300).contains(response.status), let object = try? response.json() as? [String: Any] else { return [] }
        switch kind {
        case .single:
            return (object["id"] as? NSNumber).map { [$0.int64Value] } ?? []
        case .batch:
            let results = object["results"] as? [[String: Any]] ?? []
            let ids = results.compactMap { result -> Int64? in
                guard let status = result["status"] as? Int, (200..<300).contains(status) else { return nil }
                return ((result["body"] as? [String: Any])?["id"] as? NSNumber)?.int64Value
            }
            return ids.count == 3 ? ids : []
        }
    }
}
