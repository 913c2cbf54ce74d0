import ArgumentParser
import BudgetAPI
import Foundation

/// `budget-server user add NAME`: creates a user, reading the password from standard input (docs/configuration.md).
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Manage the people who log in.",
        subcommands: [Add.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a user; the password is read from standard input (its first line).",
            discussion: """
                The first user becomes the owner of ledger 1, the data the server held so far; each later user \
                gets an empty ledger of their own. From the first user on, every route needs a token.
                """
        )

        @Argument(help: "The user's login name, 1-100 characters, unique ignoring case.")
        var name: String

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await OperatorError.explaining {
                guard let password = readLine(strippingNewline: true) else {
                    throw ValidationError("no password on standard input")
                }
                let hash = try await Users.hashForCommandLine(name: name, password: password)
                let id = try database.withConnection(migrating: true) { connection, _ in
                    try Users.add(name: name, passwordHash: hash, on: connection)
                }
                print("user \(id) \(name) created")
            }
        }
    }
}
