extension Connection {
    /// Runs `body` inside a transaction: COMMIT when it returns, ROLLBACK when anything throws.
    ///
    /// Nested calls become savepoints, so an inner failure undoes only the inner work. A body that swallows
    /// a database error leaves the transaction failed; that is reported as an error rather than a silent
    /// rollback disguised as a commit.
    ///
    /// `isolation` applies to an outermost transaction; a savepoint shares its transaction's snapshot rules.
    public func transaction<T>(isolation: IsolationLevel = .readCommitted, _ body: (Connection) throws -> T) throws -> T {
        let isNested = isInTransaction
        // PostgreSQL keeps same-named savepoints as a stack, so one name serves every depth.
        let savepoint = "budget_savepoint"
        try execute(script: isNested ? "SAVEPOINT \(savepoint)" : "BEGIN ISOLATION LEVEL \(isolation.sql)")
        let value: T
        do {
            value = try body(self)
            if isTransactionFailed {
                throw PostgresError(kind: .server, message: "transaction failed inside its body; rolled back")
            }
        } catch {
            // The original error matters; a failing ROLLBACK on a broken connection must not replace it.
            try? execute(script: isNested ? "ROLLBACK TO SAVEPOINT \(savepoint)" : "ROLLBACK")
            throw error
        }
        try execute(script: isNested ? "RELEASE SAVEPOINT \(savepoint)" : "COMMIT")
        return value
    }
}
