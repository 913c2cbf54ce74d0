import BudgetCore
import Postgres

/// The SQL behind `POST /accounts/{id}/reconcile` (docs/accounts.md, Reconciling).
enum ReconcileQueries {
    /// The adjustment's title, which a client may look for in an account's transactions.
    static let adjustmentTitle = "Reconciliation balance adjustment"

    /// Reconciles the ledger's account `id` against a statement's `balance` on `date`, in one statement:
    ///
    /// - `account` locks the account row (`FOR UPDATE`), so two reconciles of one account take turns; in the
    ///   REPEATABLE READ transaction the route runs this in, the second one then fails to serialize and runs
    ///   again on the first one's result instead of adjusting the same difference twice;
    /// - `counted` is its cleared balance on `date`: opening balance − Σ amount of its cleared and reconciled
    ///   transactions dated up to `date` (money out is positive);
    /// - when that equals `balance`, or `adjust` asks for it, `adjustment` books the difference as one
    ///   reconciled transaction without a category (amount = cleared − balance, so the cleared balance becomes
    ///   `balance`), `reconciled` marks the cleared transactions up to `date` reconciled (which locks their
    ///   amount, date and account: 0018's `transactions_lock_reconciled`), and `stamped` sets
    ///   `last_reconciled_at`; otherwise nothing is written.
    ///
    /// Answers one row, (cleared balance before any adjustment, whether it reconciled), or none when the ledger
    /// has no such account. The modifying CTEs' rows are not visible to this statement, so the account as it
    /// now is must be read by the next one.
    static func reconcile(id: Int64, balance: Money, date: String, adjust: Bool, in ledger: LedgerID) -> Query {
        """
        WITH account AS (
            SELECT \(Accounts.idColumn), \(Accounts.alias).opening_balance FROM \(Accounts.table)
            WHERE \(Accounts.inLedger(ledger)) AND \(Accounts.idColumn) = \(id)
            FOR UPDATE),
        counted AS (
            SELECT account.opening_balance - coalesce(sum(t.amount), 0) AS cleared_balance
            FROM account
            LEFT JOIN transactions t ON \(Transactions.inLedger(ledger)) AND t.account_id = account.id
                AND t.cleared IN ('cleared', 'reconciled') AND t.date <= \(date)::date
            GROUP BY account.opening_balance),
        verdict AS (
            SELECT cleared_balance, (cleared_balance = \(balance)::numeric OR \(adjust)::boolean) AS reconciles FROM counted),
        adjustment AS (
            INSERT INTO transactions (ledger_id, id, account_id, category_id, title, amount, date, cleared)
            SELECT \(ledger), nextval('transactions_id_seq'), account.id, NULL, \(adjustmentTitle),
                   verdict.cleared_balance - \(balance)::numeric, \(date)::date, 'reconciled'
            FROM account, verdict
            WHERE verdict.reconciles AND verdict.cleared_balance <> \(balance)::numeric),
        reconciled AS (
            UPDATE transactions t SET cleared = 'reconciled', version = t.version + 1, updated_at = now()
            FROM account, verdict
            WHERE verdict.reconciles AND \(Transactions.inLedger(ledger)) AND t.account_id = account.id
              AND t.cleared = 'cleared' AND t.date <= \(date)::date),
        stamped AS (
            UPDATE \(Accounts.table) SET last_reconciled_at = now(), version = \(Accounts.alias).version + 1, updated_at = now()
            FROM verdict
            WHERE verdict.reconciles AND \(Accounts.inLedger(ledger)) AND \(Accounts.idColumn) = \(id))
        SELECT verdict.cleared_balance, verdict.reconciles FROM verdict
        """
    }
}
