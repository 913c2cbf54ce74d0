import BudgetCore
import Postgres

/// The SQL behind the budget routes beyond the statements `TypedResource` builds from the members (`Budgets.members`).
enum BudgetQueries {
    /// The budget of one category and month; no row when it has none.
    static func find(categoryID: Int64, month: Month, in ledger: LedgerID) -> Query {
        """
        SELECT \(BudgetRecord.shape.record.columns) FROM budgets b
        WHERE \(Budgets.inLedger(ledger)) AND b.category_id = \(categoryID) AND b.month = \(month.sql)
        """
    }

    /// Writes answer (id, created, `record` columns) from the written row `b` (see `TypedResource`).
    private static var answer: Query { Budgets.writtenRecord }

    /// PUT /categories/:id/budgets/:month: sets the month's budget, creating it or replacing its amount;
    /// the first column says which.
    static func set(categoryID: Int64, month: Month, amount: Money?, in ledger: LedgerID) -> Query {
        """
        WITH b AS (
            INSERT INTO budgets AS existing (ledger_id, id, category_id, month, amount)
            VALUES (\(ledger), nextval('budgets_id_seq'), \(categoryID), \(month.sql), \(amount))
            ON CONFLICT (ledger_id, category_id, month) DO UPDATE
                SET amount = excluded.amount, version = existing.version + 1, updated_at = now()
            RETURNING *, xmax = 0 AS inserted)
        SELECT b.id, b.inserted, \(answer)
        """
    }

    /// DELETE /categories/:id/budgets/:month: the month goes back to the category's amount.
    static func delete(categoryID: Int64, month: Month, in ledger: LedgerID) -> Query {
        Budgets.deleteStatement(where: "b.category_id = \(categoryID) AND b.month = \(month.sql)", in: ledger)
    }
}
