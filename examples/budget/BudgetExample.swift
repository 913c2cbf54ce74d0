import ArgumentParser
import BudgetSync
import ExampleSupport
import Foundation

/// The budget app's flow on BudgetSync (docs/budgetsync.md, Examples): add a transaction while
/// offline, push it, and see the category's `spent` come back from the server, exact to the cent.
/// Against a server seeded with examples/budget.json:
///
///     swift run budget-server --seed examples/budget.json
///     swift run example-budget --category 1 --title Coffee --amount 3.20
@main
struct BudgetExample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-budget",
        abstract: "Add a transaction offline, push it, and read the category's spent back with BudgetSync.")

    @OptionGroup var sync: SyncOptions

    @Option(help: "The id of the category the transaction goes to.")
    var category = 1

    @Option(help: "The transaction's title.")
    var title = "Coffee"

    @Option(help: "The amount, a decimal with at most two places.")
    var amount = "3.20"

    func validate() throws {
        // Money reads the whole text as the server does, in whole cents, or refuses it ("3.2x", "3.205").
        guard Money(amount) != nil else {
            throw ValidationError("--amount must be a decimal number such as 3.20")
        }
    }

    func run() async throws {
        let (client, local) = try sync.open(example: "budget", collections: ["categories", "transactions"])
        let categoryID = String(category)

        print("pull: \(try await client.pull())")
        guard let before = try await local.records(in: "categories")[categoryID]?.decode(BudgetCategory.self) else {
            throw ValidationError("the server has no category \(category)")
        }
        // Money prints two decimals, as the server writes amounts.
        print("\(before.title): amount \(before.amount), spent \(before.spent), remaining \(before.remaining)")

        // Offline: the write waits in the outbox, durable, until a push gets an answer for it.
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["title": title, "amount": amount]), as: UTF8.self)
        try await client.enqueue(.post, "/categories/\(category)/transactions", body: body)
        print("queued offline: \(title) \(amount), outbox \(await local.pendingOperations().count)")

        for acknowledgement in try await client.push() {
            print("pushed: \(acknowledgement.summary)")
        }
        print("pull: \(try await client.pull())")

        // The feed lists the new transaction, not its category again (docs/sync.md): refresh that one record.
        guard let after = try await client.refresh(collection: "categories", id: categoryID)?.record.decode(BudgetCategory.self) else {
            throw ValidationError("category \(category) was deleted meanwhile")
        }
        print("\(after.title): amount \(after.amount), spent \(after.spent) (was \(before.spent), +\(after.spent - before.spent)), remaining \(after.remaining)")
    }
}
