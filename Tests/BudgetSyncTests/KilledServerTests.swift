import BudgetSync
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing
import APITestSupport
import TestSupport

/// A real `budget-server` killed with SIGKILL while a batch of the push is in flight, then started again:
/// the client's retry leaves every queued write on the server exactly once (docs/sync.md, Idempotency keys).
@Suite struct KilledServerTests {
    @Test func aPushCutByKillNineLeavesEveryWriteExactlyOnceAfterTheRestart() async throws {
        let databaseURL = try await TestDatabase.fresh()
        try await TestApp.seed(#"{"posts":[{"id":1,"title":"existing"}]}"#, into: databaseURL)
        let transport = try await RestartingTransport(databaseURL: databaseURL, killingAtBatch: 2, firstPostOfCutBatch: 51)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("budget-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try FileSyncStore(url: folder.appendingPathComponent("store.json"))
        var configuration = SyncClient.Configuration(
            baseURL: URL(string: "http://127.0.0.1:1")!, collections: ["posts"], deviceID: "killed")
        configuration.batchLimit = 50
        configuration.retry = RetryPolicy(maxAttempts: 20, baseDelay: .milliseconds(20), maxDelay: .seconds(1))
        let client = SyncClient(configuration: configuration, store: store, transport: transport)
        for number in 1...150 { try await client.enqueue(.post, "/posts", body: #"{"title":"post \#(number)"}"#) }

        #expect(try await client.push().count == 150)
        #expect(transport.kills == 1, "the second batch was cut by the kill")
        var replays: [Int] = []
        for _ in 1...3 {
            if case .pushed(_, let replayed) = await client.firstEvent({ if case .pushed = $0 { true } else { false } }) { replays.append(replayed) }
        }
        // The cut batch had committed, so its retry after the restart is a replay of all 50 operations.
        #expect(replays == [0, 50, 0])
        #expect(await store.pendingOperations().isEmpty)
        let list = try await transport.server.request("GET", "/posts")
        let titles = (try JSONSerialization.jsonObject(with: Data(list.body)) as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        #expect(titles.count == 151)
        #expect(Set(titles) == Set(["existing"] + (1...150).map { "post \($0)" }), "every write exactly once")
    }
}

/// Sends requests to the current `budget-server` process, whatever port it listens on. At the
/// `killingAtBatch`-th `POST /batch` it sends the request, kills the server with SIGKILL once the batch has
/// committed, starts a new server on the same database, and reports the connection as lost.
final class RestartingTransport: HTTPTransport, @unchecked Sendable {
    // `current`, `batches` and `killCount` are read and written only under `lock`.
    private let lock = NSLock()
    private var current: ServerProcess
    private var batches = 0
    private var killCount = 0
    private let databaseURL: String
    private let killingAtBatch: Int
    private let firstPostOfCutBatch: Int
    private let real = URLSessionTransport()

    init(databaseURL: String, killingAtBatch: Int, firstPostOfCutBatch: Int) async throws {
        self.databaseURL = databaseURL
        self.killingAtBatch = killingAtBatch
        self.firstPostOfCutBatch = firstPostOfCutBatch
        current = try await ServerProcess.start(["--database-url", databaseURL])
    }

    var server: ServerProcess { lock.withLock { current } }
    var kills: Int { lock.withLock { killCount } }

    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        let server = self.server
        var routed = request
        var components = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
        components.port = server.port
        routed.url = components.url
        let isTheBatchToCut =
            request.url?.path == "/batch"
            && lock.withLock {
                batches += 1
                return batches == killingAtBatch
            }
        guard isTheBatchToCut else { return try await real.send(routed) }

        let inFlight = Task { try await real.send(routed) }
        // Kill once the batch has committed (its first post is listed), before or while its answer is sent:
        // the case where only the key stops a retry from writing twice.
        try await waitUntil("the cut batch committed", timeout: .seconds(60)) {
            let probe = try await server.request("GET", "/posts?title=post%20\(firstPostOfCutBatch)")
            return probe.status == 200 && probe.text != "[]"
        }
        try await server.process.kill()
        _ = await inFlight.result
        let restarted = try await ServerProcess.start(["--database-url", databaseURL])
        lock.withLock {
            current = restarted
            killCount += 1
        }
        throw URLError(.networkConnectionLost)
    }
}
