import BudgetSync
import Foundation
import Testing
import APITestSupport
import TestSupport

/// A split goes through BudgetSync as one queued write and comes back as its parent and parts
/// (docs/splits-and-schedules.md): created, its parts replaced and deleted, the store and the ledger's
/// figures following each step.
@Suite struct SplitSyncTests {
    static func money(_ text: String) throws -> Money { try #require(Money(text)) }

    @Test func aSplitIsPushedAsOneOperationAndPulledWithItsParts() async throws {
        try await TestApp.with { server in
            #expect(
                try await server.request("POST", "/accounts", json: #"{"name":"Checking","type":"checking","openingBalance":"500.00"}"#).status == 201
            )
            for title in ["Groceries", "Eating out", "Household"] {
                #expect(try await server.request("POST", "/categories", json: #"{"title":"\#(title)","amount":"100.00"}"#).status == 201)
            }
            let (client, store) = try server.makeClient(device: "splits", collections: ["categories", "transactions", "accounts"])
            func ledger() async throws -> (BudgetLedger, [BudgetTransaction]) {
                let decoder = JSONDecoder()
                let transactions = try await store.records(in: "transactions").values.map { try $0.decode(BudgetTransaction.self, using: decoder) }
                let categories = try await store.records(in: "categories").values.map { try $0.decode(BudgetCategory.self, using: decoder) }
                let accounts = try await store.records(in: "accounts").values.map { try $0.decode(BudgetAccount.self, using: decoder) }
                return (BudgetLedger(categories: categories, transactions: transactions, budgets: [], accounts: accounts), transactions)
            }

            let (groceries, total, left, household) = (
                try Self.money("62.30"), try Self.money("84.30"), try Self.money("415.70"), try Self.money("4.30")
            )
            let parts = [BudgetSplit(categoryId: 1, amount: groceries), BudgetSplit(categoryId: 2, amount: Money(cents: 2200), note: "lunch")]
            let body =
                #"{"accountId":1,"title":"Supermarket","amount":"84.30","date":"2026-11-27","splits":"#
                + String(decoding: try JSONEncoder().encode(parts), as: UTF8.self) + "}"
            try await client.enqueue(.post, "/transactions", body: body)
            let created = try await client.push()
            try #require(created.count == 1 && created[0].status == 201, "one operation, one acknowledgement")
            let parent = try #require(try created[0].record?.decode(BudgetTransaction.self))
            #expect(parent.isSplit && parent.categoryId == nil && parent.parentId == nil)
            let partIDs = parent.splits?.compactMap(\.id) ?? []
            #expect(partIDs.count == 2 && parent.splits?.map(\.categoryId) == [1, 2] && parent.splits?[1].note == "lunch")

            try await client.pull()
            let november = try #require(Month("2026-11"))
            var (figures, transactions) = try await ledger()
            #expect(transactions.count == 3)
            #expect(Set(transactions.filter { $0.parentId == parent.id }.map(\.id)) == Set(partIDs))
            #expect(transactions.filter { $0.parentId == parent.id }.allSatisfy { $0.accountId == nil && $0.date == "2026-11-27" })
            #expect(figures.figures(of: 1, in: november)?.spent == groceries)
            #expect(figures.figures(of: 2, in: november)?.spent == Money(cents: 2200))
            #expect(figures.balances(of: 1)?.balance == left)
            #expect(figures.summary(in: november).uncategorised == .zero && figures.summary(in: november).spent == total)

            // The parts replaced, in one queued PATCH of the parent as the store holds it.
            let held = try #require(try await store.records(in: "transactions")["\(parent.id)"])
            try await client.enqueue(
                .patch, editing: held, body: #"{"splits":[{"categoryId":1,"amount":"80.00"},{"categoryId":3,"amount":"4.30"}]}"#)
            #expect(try await client.push().map(\.status) == [200])
            try await client.pull()
            (figures, transactions) = try await ledger()
            let newParts = transactions.filter { $0.parentId == parent.id }
            #expect(transactions.count == 3 && newParts.count == 2 && Set(newParts.map(\.id)).isDisjoint(with: partIDs))
            #expect(figures.figures(of: 1, in: november)?.spent == Money(cents: 8000) && figures.figures(of: 2, in: november)?.spent == .zero)
            #expect(figures.figures(of: 3, in: november)?.spent == household)
            #expect(figures.balances(of: 1)?.balance == left)

            // A part refused on its own: the rejection names it, and the queue is left as it was.
            let part = try #require(try await store.records(in: "transactions")["\(newParts[0].id)"])
            try await client.enqueue(.delete, editing: part)
            await #expect(throws: SyncError.self) { try await client.push() }
            #expect(try await store.pendingOperations().count == 1)
            try await store.removeOperations(withKeys: Set(try await store.pendingOperations().map(\.key)))

            // Deleting the parent takes its parts with it, tombstones and all.
            let again = try #require(try await store.records(in: "transactions")["\(parent.id)"])
            try await client.enqueue(.delete, editing: again)
            #expect(try await client.push().map(\.status) == [200])
            try await client.pull()
            (figures, transactions) = try await ledger()
            #expect(transactions.isEmpty && figures.balances(of: 1)?.balance == Money(cents: 50_000))
        }
    }
}
