import BudgetSync
import Foundation
import Synchronization
import Testing
import APITestSupport
import TestSupport

/// A write the server refuses for good (422) follows the rejection policy; the rest of the outbox is
/// never lost with it (docs/budgetsync.md, Push).
@Suite struct RejectionTests {
    static let valid = #"{"title":"Milk","amount":"3.49","date":"2026-11-20"}"#
    /// An amount the API refuses with 422 (docs/api.md).
    static let invalid = #"{"title":"Broken","amount":"three","date":"2026-11-20"}"#

    @Test func stopLeavesTheWholeOutboxQueued() async throws {
        try await TestApp.with { server in
            _ = try await server.request("POST", "/categories", json: #"{"title":"Food","amount":"400.00"}"#)
            let (client, store) = try server.makeClient(device: "strict", collections: ["categories", "transactions"])
            for body in [Self.valid, Self.invalid, Self.valid] { try await client.enqueue(.post, "/categories/1/transactions", body: body) }
            await #expect {
                try await client.push()
            } throws: { error in
                guard case SyncError.rejected(422, 1, _) = error else { return false }
                return true
            }
            #expect(await store.pendingOperations().count == 3)
            #expect(try await server.objects(in: "transactions").isEmpty, "the atomic batch applied nothing")
        }
    }

    @Test func setAsideHandsTheWriteOverAndPushesTheRest() async throws {
        try await TestApp.with { server in
            _ = try await server.request("POST", "/categories", json: #"{"title":"Food","amount":"400.00"}"#)
            let setAside = Mutex<[Rejection]>([])
            let (client, store) = try server.makeClient(device: "lenient", collections: ["categories", "transactions"]) {
                $0.rejectionPolicy = .setAside { rejection in setAside.withLock { $0.append(rejection) } }
            }
            var queued: [PendingOperation] = []
            for body in [Self.valid, Self.invalid, Self.valid] {
                queued.append(try await client.enqueue(.post, "/categories/1/transactions", body: body))
            }
            let acknowledged = try await client.push()
            #expect(acknowledged.map(\.operation) == [queued[0], queued[2]])
            let rejections = setAside.withLock { $0 }
            #expect(rejections.map(\.operation) == [queued[1]] && rejections.first?.status == 422)
            #expect(await store.pendingOperations().isEmpty)
            #expect(try await server.objects(in: "transactions").values.compactMap { $0["title"] as? String } == ["Milk", "Milk"])
        }
    }
}
