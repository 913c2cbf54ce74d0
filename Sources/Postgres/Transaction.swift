extension Connection {
    /// Runs `body` inside a transaction: COMMIT when it returns, ROLLBACK when anything throws.
    ///
    /// Nested calls become savepoints, so an inner failure undoes only the inner work. A body that swallows
    /// a database error leaves the transaction failed; that is reported as an error rather than a silent
    /// rollback disguised as a commit.
    ///
    /// `isolation` applies to an outermost transaction; a savepoint shares its transaction's snapshot rules.
    public func transaction<T>(isolation: IsolationLevel = .readCommitted, _ body: (Connection) throws -> T) throws -> T {
        let scope = TransactionScope(isNested: isInTransaction, isolation: isolation)
        try execute(script: scope.begin.sql)
        let value: T
        do {
            value = try body(self)
            try checkNotFailed()
        } catch {
            // The original error matters; a failing ROLLBACK on a broken connection must not replace it.
            try? execute(script: scope.rollback.sql)
            throw error
        }
        try execute(script: scope.commit.sql)
        return value
    }

    /// Throws when the open transaction has failed: its COMMIT would silently roll back, and a body that
    /// swallowed an error must not look committed.
    func checkNotFailed() throws {
        if isTransactionFailed {
            throw PostgresError(kind: .server, message: "transaction failed inside its body; rolled back")
        }
    }
}

/// The statements that open and close one transaction, or one savepoint inside an open transaction: the
/// text of both ways to run a transaction (`Connection.transaction`, `ReservedConnection.transaction`).
struct TransactionScope {
    // PostgreSQL keeps same-named savepoints as a stack, so one name (budget_savepoint) serves every depth.

    let begin: Query
    let commit: Query
    let rollback: Query

    init(isNested: Bool, isolation: IsolationLevel) {
        if isNested {
            begin = "SAVEPOINT budget_savepoint"
            commit = "RELEASE SAVEPOINT budget_savepoint"
            rollback = "ROLLBACK TO SAVEPOINT budget_savepoint"
        } else {
            switch isolation {
            case .readCommitted: begin = "BEGIN ISOLATION LEVEL READ COMMITTED"
            case .repeatableRead: begin = "BEGIN ISOLATION LEVEL REPEATABLE READ"
            }
            commit = "COMMIT"
            rollback = "ROLLBACK"
        }
    }
}

/// How much a transaction sees of others committing while it runs (PostgreSQL's levels).
public enum IsolationLevel: Sendable {
    /// Each statement sees what was committed before it began (PostgreSQL's default).
    case readCommitted
    /// Every statement sees one snapshot; a write to a row someone changed since fails with 40001.
    case repeatableRead

    var sql: String {
        switch self {
        case .readCommitted: "READ COMMITTED"
        case .repeatableRead: "REPEATABLE READ"
        }
    }
}
