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
        // Decimal(string:) would read "3.2x" as 3.2: the whole text must be the number.
        guard amount.wholeMatch(of: /-?[0-9]+(\.[0-9]{1,2})?/) != nil else {
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
        print("\(before.title): amount \(money(before.amount)), spent \(money(before.spent)), remaining \(money(before.remaining))")

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
        print("\(after.title): amount \(money(after.amount)), spent \(money(after.spent)) (was \(money(before.spent)), +\(money(after.spent - before.spent))), remaining \(money(after.remaining))")
    }

    /// Two decimal places, as the server writes money: `Decimal`'s own description drops trailing zeros.
    private func money(_ value: Decimal) -> String {
        value.formatted(.number.precision(.fractionLength(2)).grouping(.never).locale(Locale(identifier: "en_US_POSIX")))
    }
}
