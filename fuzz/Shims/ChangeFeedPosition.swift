import Postgres

// A copy of `ChangeFeedQueries.position` from Sources/BudgetAPI/Sync/ChangeFeedQueries.swift, which cannot be
// compiled here without the resources' queries it also holds. The list statements splice it in; its text
// is the same for every plan, so a stale copy cannot hide a change the list-query target looks for.

enum ChangeFeedQueries {
    static let position: Query = "(SELECT last_seq FROM change_feed_state)"
}
