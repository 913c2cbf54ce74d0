import Postgres

/// The SQL behind the category routes beyond the statements `TypedResource` builds from the members (`Categories.members`).
enum CategoryQueries {

    /// Joins each category row `c` with its all-time figures `f`: the sum of its transactions and what remains.
    static let balance: Query = """
        CROSS JOIN LATERAL (SELECT s.spent, c.amount - s.spent AS remaining FROM \
        (SELECT coalesce(sum(t.amount), 0.00) AS spent FROM transactions t WHERE t.ledger_id = c.ledger_id AND t.category_id = c.id) s) f
        """

    /// What category lists select from: each row `c` with its all-time figures `f`.
    static var source: Query { Categories.source }

    /// Each category row `c` with its figures `f` in the month whose first day `month` is (a `date`
    /// expression), from `category_months` (migrations/0017). The count of months is SQL text, not a bound
    /// value, so that a prepared statement's generic plan knows it is one month (see the function). The
    /// caller scopes `c` to its ledger.
    static func source(month: Query) -> Query {
        "categories c CROSS JOIN LATERAL category_months(c.ledger_id, c.id, c.amount, c.rollover, c.created_at, \(month), 1) f"
    }

    /// The JSON object of a category row `c` with figures `f` in `shape`, optionally with its transactions.
    static func json(_ shape: RecordShape = CategoryRecord.shape, embeddingTransactions: Bool) -> Query {
        let columns = shape.record.renderedColumns
        guard embeddingTransactions else { return SQLFragments.jsonObject(columns: columns) }
        let transactions = TransactionQueries.jsonArray(where: "t.ledger_id = c.ledger_id AND t.category_id = c.id")
        return SQLFragments.jsonObject(columns: "\(columns), \(transactions) AS transactions")
    }

    /// A scalar subquery: the JSON object of the category that `condition` picks (over alias `c`).
    static func jsonObject(where condition: Query) -> Query {
        "(SELECT \(json(embeddingTransactions: false)) FROM \(source) WHERE \(condition))"
    }

    /// Whether the ledger has the category, as a boolean expression.
    static func exists(id: Int64, in ledger: LedgerID) -> Query {
        "EXISTS (SELECT 1 FROM categories c WHERE \(Categories.inLedger(ledger)) AND c.id = \(id))"
    }

    /// The category's JSON rendered in SQL over `source` (all time, or a month's; its scope names the
    /// ledger), for `_embed=transactions`.
    static func find(id: Int64, source: ListSource) -> Query {
        guard case .rendered(let element) = source.element else {
            return "SELECT \(source.shape.record.columns) FROM \(source.from) WHERE \(source.scope) AND c.id = \(id)"
        }
        return "SELECT \(element) FROM \(source.from) WHERE \(source.scope) AND c.id = \(id)"
    }
}
