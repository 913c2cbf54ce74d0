import Postgres

/// The SQL behind the account routes beyond the statements `TypedResource` builds from the members (`Accounts.members`).
enum AccountQueries {
    /// Joins each account row `a` with the sums `f` of its transactions: every amount (`spent`, money out
    /// less money in) and the uncleared ones'. The balances of `AccountRecord` are the opening balance less
    /// these (docs/accounts.md); the index on (ledger, account, date) holds amount and state, so the sums
    /// read it alone.
    static let sums: Query = """
        CROSS JOIN LATERAL (SELECT coalesce(sum(t.amount), 0.00) AS spent, \
        coalesce(sum(t.amount) FILTER (WHERE t.cleared = 'uncleared'), 0.00) AS uncleared \
        FROM transactions t WHERE t.ledger_id = a.ledger_id AND t.account_id = a.id) f
        """

    /// Whether the ledger has the account, as a boolean expression.
    static func exists(id: Int64, in ledger: LedgerID) -> Query {
        "EXISTS (SELECT 1 FROM accounts a WHERE \(Accounts.inLedger(ledger)) AND a.id = \(id))"
    }
}
