import BudgetAPI
import BudgetSync
import Foundation
import HTTPServer
import Logging
import Postgres
import TestSupport

/// budget-server's API on a fresh database, listening on an ephemeral port, for `SyncClient`s to talk to.
final class SyncServer: Sendable {
    let baseURL: URL
    let databaseURL: String
    private let server: Server
    private let service: BudgetApp.Service
    private let pool: ConnectionPool

    private init(options: BudgetApp.Options) async throws {
        var logger = Logger(label: "budget-sync-tests")
        logger.logLevel = .critical
        databaseURL = try await TestDatabase.fresh()
        // A checkout timeout far above any stall of a loaded 2-core machine: no 503 the test did not ask for.
        pool = ConnectionPool(configuration: PoolConfiguration(url: databaseURL, size: 4, checkoutTimeout: .seconds(30)), logger: logger)
        service = BudgetApp.makeService(
            pool: pool, migrator: Migrator(migrations: try TestDatabase.migrations(), logger: logger), options: options, logger: logger)
        var configuration = ServerConfiguration()
        configuration.port = 0
        server = Server(configuration: configuration, logger: logger, handlerForLoop: service.handlerForLoop)
        baseURL = URL(string: "http://127.0.0.1:\(try server.start())")!
    }

    /// Runs `body` against a new server and stops the server afterwards, whether or not `body` throws.
    static func with(options: BudgetApp.Options = BudgetApp.Options(), _ body: (SyncServer) async throws -> Void) async throws {
        let server = try await SyncServer(options: options)
        let outcome: Result<Void, Error>
        do { try await body(server); outcome = .success(()) } catch { outcome = .failure(error) }
        server.service.beginShutdown()
        await server.server.shutdown(gracePeriod: .seconds(1))
        await server.pool.shutdown()
        try outcome.get()
    }

    /// One request from outside the client under test (another device, an admin), on a thread of its own.
    @discardableResult
    func request(_ method: String, _ path: String, json: String? = nil, headers: [(String, String)] = []) async throws -> TestResponse {
        let port = baseURL.port ?? 0
        return try await runOffCooperativePool {
            try TestClient(port: port, timeout: .seconds(30)).request(method, path, json: json, headers: headers)
        }
    }

    /// Loads a json-server document (docs/json-server.md) straight into the database.
    func seed(_ json: String) async throws {
        try await Self.seed(json, into: databaseURL)
    }

    static func seed(_ json: String, into databaseURL: String) async throws {
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: databaseURL)
            defer { connection.close() }
            _ = try Seeder.load(Array(json.utf8), into: connection)
        }
    }

    /// The server's records of `collection` by id, as canonical JSON (a missing collection has none).
    func objects(in collection: String) async throws -> [String: Canonical] {
        let list = try await request("GET", "/" + collection)
        guard list.status == 200 else { return [:] }
        var objects: [String: Canonical] = [:]
        for case let object as [String: Any] in try JSONSerialization.jsonObject(with: Data(list.body)) as? [Any] ?? [] {
            objects["\(object["id"] ?? "")"] = try Canonical(object)
        }
        return objects
    }

    /// A client with its own file store in a new temporary folder.
    func makeClient(
        device: String, collections: [String], transport: any HTTPTransport = URLSessionTransport(),
        store: (any SyncStore)? = nil, _ configure: (inout SyncClient.Configuration) -> Void = { _ in }
    ) throws -> (SyncClient, FileSyncStore) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("budget-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let fileStore = try FileSyncStore(url: folder.appendingPathComponent("store.json"))
        var configuration = SyncClient.Configuration(baseURL: baseURL, collections: collections, deviceID: device)
        // Short waits between retries: the tests retry on purpose and must not idle.
        configuration.retry = RetryPolicy(maxAttempts: 8, baseDelay: .milliseconds(20), maxDelay: .seconds(2))
        configure(&configuration)
        return (SyncClient(configuration: configuration, store: store ?? fileStore, transport: transport), fileStore)
    }
}

extension FileSyncStore {
    /// The local records of `collection` as canonical JSON, to compare with the server's.
    func objects(in collection: String) throws -> [String: Canonical] {
        try records(in: collection).mapValues { try Canonical(JSONSerialization.jsonObject(with: $0.json) as? [String: Any] ?? [:]) }
    }
}

/// A JSON object with sorted keys, compared as text; its members stay readable by name.
struct Canonical: Sendable, Hashable, CustomStringConvertible {
    let description: String

    init(_ object: [String: Any]) throws {
        description = String(decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
    }

    subscript(member: String) -> Any? {
        ((try? JSONSerialization.jsonObject(with: Data(description.utf8))) as? [String: Any])?[member]
    }
}


extension SyncClient {
    /// The first event `wanted` accepts, or nil if none comes within `timeout`. Events are buffered,
    /// so one sent before the call is found at once.
    nonisolated func firstEvent(
        within timeout: Duration = .seconds(10), _ wanted: @escaping @Sendable (SyncEvent) -> Bool
    ) async -> SyncEvent? {
        await withTaskGroup(of: SyncEvent?.self) { group in
            group.addTask { [events] in await events.first(where: wanted) }
            group.addTask { try? await Task.sleep(for: timeout); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
