import BudgetAPI
import BudgetSync
import Foundation
import Postgres
import TestSupport
import APITestSupport

/// What a sync test adds to the API tests' `TestApp`: the server's side to compare with, and clients.
extension TestApp {
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
            group.addTask {
                try? await Task.sleep(for: timeout); return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// A month's summary as `/months/{month}` answers it, and as `BudgetLedger.summary(in:)` computes it offline:
/// the figure tests compare the two.
struct ServerMonthSummary: Decodable, Equatable {
    var month: String
    var budgeted: Money
    var spent: Money
    var carried: Money
    var remaining: Money
    var income: Money
    var uncategorised: Money
    var toBeBudgeted: Money
    var scheduled: Money

    init(_ summary: MonthSummary) {
        (month, budgeted, spent, carried, remaining) =
            ("\(summary.month)", summary.budgeted, summary.spent, summary.carried, summary.remaining)
        (income, uncategorised, toBeBudgeted, scheduled) = (summary.income, summary.uncategorised, summary.toBeBudgeted, summary.scheduled)
    }
}
