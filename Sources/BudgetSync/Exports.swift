// Apps name the library's money and months (`Money`, `Month`) with `import BudgetSync` alone: they are
// BudgetCore's, the server's own definitions (docs/budgetsync.md).
@_exported import BudgetCore
