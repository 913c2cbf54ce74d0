import ArgumentParser

/// The budget-server command line: `serve` (the default) and `migrate`.
@main
struct BudgetServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "budget-server",
        abstract: "A budget-tracking REST API on PostgreSQL.",
        discussion: """
            Flags override environment variables, which override defaults. Without --database-url \
            (or DATABASE_URL) a private PostgreSQL cluster is started under --data-dir.
            """,
        subcommands: [Serve.self, Migrate.self, Seed.self, Export.self, UserCommand.self],
        defaultSubcommand: Serve.self
    )
}
