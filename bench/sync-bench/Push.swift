import ArgumentParser
import BudgetSync
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `budget-sync-bench push`: queues new transactions in a `FileSyncStore` (a durable outbox that fsyncs
/// every change, which is what an app pays), then times `push()` alone: the atomic `POST /batch`
/// requests and removing each acknowledged batch from the outbox.
struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue N new transactions and push them; print operations, batches, seconds, rate and body bytes as one JSON line.",
        discussion: """
            Each operation is POST /categories/ID/transactions with the title "bench", so bench/run's and \
            bench/sync's reset deletes the rows again. requestBodyBytesPerOperation is the /batch request \
            bodies divided by the operations: the JSON the push sends, without HTTP's own bytes.
            """
    )

    @Option(help: "The server's base URL, such as http://127.0.0.1:3000.")
    var url: String

    @Option(help: "Writes to queue and push.")
    var operations: Int

    @Option(help: "Operations per POST /batch (the server's --batch-limit is 100 by default).")
    var batchLimit = 100

    @Option(help: "The category the new transactions go to.")
    var categoryId = 1

    func validate() throws {
        guard operations > 0 else { throw ValidationError("--operations must be at least 1") }
        guard batchLimit > 0 else { throw ValidationError("--batch-limit must be at least 1") }
        _ = try serverURL(url)
    }

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("budget-sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try FileSyncStore(url: folder.appendingPathComponent("outbox.json"))
        let transport = CountingTransport()
        var configuration = SyncClient.Configuration(
            baseURL: try serverURL(url), collections: ["categories", "transactions"], deviceID: "sync-bench")
        configuration.batchLimit = batchLimit
        let client = SyncClient(configuration: configuration, store: store, transport: transport)

        // Bodies like the bench's POST (bench/lua/post.lua), with a date, and amounts and days that vary
        // so that no two rows are alike; money as a string with two decimals (docs/api.md, Money).
        for index in 0..<operations {
            let cents = 100 + index * 37 % 9900
            let amount = "\(cents / 100)." + (cents % 100 < 10 ? "0" : "") + "\(cents % 100)"
            let day = 1 + index % 28
            let date = "2026-01-" + (day < 10 ? "0" : "") + "\(day)"
            try await client.enqueue(
                .post, "/categories/\(categoryId)/transactions", body: #"{"title":"bench","amount":"\#(amount)","date":"\#(date)"}"#)
        }

        let clock = ContinuousClock()
        let started = clock.now
        let applied = try await client.push().count
        let elapsed = seconds(clock.now - started)

        let sent = transport.batchRequests
        var line = JSONLine()
        line.add("operations", applied)
        line.add("batches", sent.count)
        line.add("seconds", elapsed, decimals: 3)
        line.add("operationsPerSecond", Double(applied) / elapsed, decimals: 0)
        line.add("requestBodyBytesPerOperation", Double(sent.bodyBytes) / Double(applied), decimals: 1)
        line.write()
    }
}

/// Sends through URLSession and adds up the `/batch` requests and their bodies (every attempt: a retried
/// batch is sent, and paid for, again).
///
/// `@unchecked Sendable`: `count` and `bodyBytes` are read and written only under `lock`.
final class CountingTransport: HTTPTransport, @unchecked Sendable {
    private let real = URLSessionTransport()
    private let lock = NSLock()
    private var count = 0
    private var bodyBytes = 0

    var batchRequests: (count: Int, bodyBytes: Int) { lock.withLock { (count, bodyBytes) } }

    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        if request.url?.path.hasSuffix("/batch") == true {
            lock.withLock {
                count += 1
                bodyBytes += request.httpBody?.count ?? 0
            }
        }
        return try await real.send(request)
    }
}
