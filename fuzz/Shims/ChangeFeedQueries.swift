import Postgres

// The two members of `ChangeFeedQueries` (Sources/BudgetAPI/Sync/ChangeFeedQueries.swift) the listing's SQL
// uses; that file cannot be compiled here, as it names the change feed's routes and the record queries. The
// list statements splice it in; its text is the same for every plan, so a stale copy cannot hide a change
// the list-query target looks for, and a changed name or type fails the fuzz build.

enum ChangeFeedQueries {
    /// The feed position as a scalar subquery, read with a list's rows.
    static func position(_ ledger: LedgerID) -> Query { "(SELECT last_seq FROM change_feed_state WHERE ledger_id = \(ledger))" }

    /// The data version a large list's weak `ETag` is made of, read with its header.
    static func dataVersion(_ ledger: LedgerID) -> Query {
        "(SELECT last_seq || '.' || (SELECT count(*) FROM change_pending WHERE ledger_id = \(ledger)) FROM change_feed_state WHERE ledger_id = \(ledger))"
    }
}
