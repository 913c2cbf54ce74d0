import BudgetAPI
import BudgetSync
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Testing
import APITestSupport
import TestSupport

/// A push whose outcome the client never learned is sent again with the same keys, and every queued
/// write ends up on the server exactly once (docs/sync.md, Idempotency keys).
@Suite struct PushRetryTests {
    /// A json-server collection exists once it holds a record (docs/json-server.md).
    static let existing = #"{"posts":[{"id":100,"title":"existing"}]}"#

    @Test func aBatchWhoseAnswerWasLostIsReplayedNotAppliedTwice() async throws {
        try await TestApp.with { server in
            try await server.seed(Self.existing)
            let transport = AnswerLosingTransport(losing: 1)
            let (client, store) = try server.makeClient(device: "lossy", collections: ["posts"], transport: transport)
            var queued: [PendingOperation] = []
            for number in 1...3 { queued.append(try await client.enqueue(.post, "/posts", body: #"{"title":"post \#(number)"}"#)) }
            let acknowledged = try await client.push()
            #expect(transport.lostAnswers == 1)
            // The replayed answers are the original ones: each create's 201, new id and Location.
            #expect(acknowledged.map(\.operation) == queued)
            #expect(acknowledged.allSatisfy { $0.isReplay && $0.status == 201 && $0.record?.collection == "posts" })
            #expect(acknowledged.map { $0.headers["location"] } == acknowledged.map { $0.record.map { "/posts/\($0.id)" } })
            #expect(Set(acknowledged.compactMap { $0.record?.id }).count == 3)
            #expect(await client.firstEvent { if case .pushed = $0 { true } else { false } } == .pushed(operations: 3, replayed: 3))
            #expect(await store.pendingOperations().isEmpty)
            let titles = try await server.objects(in: "posts").values.compactMap { $0["title"] as? String }
            #expect(titles.sorted() == ["existing", "post 1", "post 2", "post 3"])
        }
    }

    @Test func anOutboxThatOutlivedItsAcknowledgementIsReplayed() async throws {
        try await TestApp.with { server in
            try await server.seed(Self.existing)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("budget-sync-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // The server applies the batch, then the app dies before the outbox forgets it.
            let failing = ForgetfulStore(try FileSyncStore(url: folder.appendingPathComponent("store.json")))
            let (client, _) = try server.makeClient(device: "crashy", collections: ["posts"], store: failing)
            for number in 1...4 { try await client.enqueue(.post, "/posts", body: #"{"title":"post \#(number)"}"#) }
            await #expect(throws: ForgetfulStore.Crash.self) { try await client.push() }
            #expect(try await failing.pendingOperations().count == 4)

            // The restarted app: a new client on the same file pushes the same outbox.
            let (restarted, _) = try server.makeClient(
                device: "crashy", collections: ["posts"], store: try FileSyncStore(url: failing.base.url))
            #expect(try await restarted.push().count == 4)
            #expect(await restarted.firstEvent { if case .pushed = $0 { true } else { false } } == .pushed(operations: 4, replayed: 4))
            let titles = try await server.objects(in: "posts").values.compactMap { $0["title"] as? String }
            #expect(titles.sorted() == ["existing", "post 1", "post 2", "post 3", "post 4"])
        }
    }

    @Test func aBatchLargerThanTheServerAllowsIsSplit() async throws {
        var options = BudgetApp.Options()
        options.batchLimit = 2
        try await TestApp.with(options: options) { server in
            try await server.seed(Self.existing)
            let (client, store) = try server.makeClient(device: "big", collections: ["posts"]) { $0.batchLimit = 5 }
            for number in 1...5 { try await client.enqueue(.post, "/posts", body: #"{"title":"post \#(number)"}"#) }
            #expect(try await client.push().count == 5)
            #expect(await store.pendingOperations().isEmpty)
            #expect(try await server.objects(in: "posts").count == 6)
        }
    }
}

/// Sends each request, but throws away the answer of the first `losing` `POST /batch` requests, as a
/// connection that drops after the server committed.
final class AnswerLosingTransport: HTTPTransport, @unchecked Sendable {
    // `remaining` and `lost` are read and written only under `lock`.
    private let lock = NSLock()
    private var remaining: Int
    private var lost = 0
    private let real = URLSessionTransport()

    init(losing: Int) { remaining = losing }

    var lostAnswers: Int { lock.withLock { lost } }

    func send(_ request: URLRequest) async throws -> HTTPAnswer {
        let answer = try await real.send(request)
        let loses =
            request.url?.path == "/batch"
            && lock.withLock {
                guard remaining > 0 else { return false }
                remaining -= 1
                lost += 1
                return true
            }
        if loses { throw URLError(.networkConnectionLost) }
        return answer
    }
}

/// A store whose first removal of acknowledged operations fails, as if the app died at that moment.
actor ForgetfulStore: SyncStore {
    struct Crash: Error {}
    nonisolated let base: FileSyncStore
    private var hasCrashed = false

    init(_ base: FileSyncStore) { self.base = base }

    func cursor() async throws -> Int? { await base.cursor() }
    func apply(_ changes: [Change], cursor: Int?) async throws { try await base.apply(changes, cursor: cursor) }
    func replaceAll(with records: [Record], cursor: Int) async throws { try await base.replaceAll(with: records, cursor: cursor) }
    func pendingOperations() async throws -> [PendingOperation] { await base.pendingOperations() }
    func appendOperation(_ operation: PendingOperation) async throws { try await base.appendOperation(operation) }
    func updateOperation(_ operation: PendingOperation) async throws { try await base.updateOperation(operation) }
    func removeOperations(withKeys keys: Set<String>) async throws {
        if !hasCrashed { hasCrashed = true; throw Crash() }
        try await base.removeOperations(withKeys: keys)
    }
}
