import BudgetCore
import Postgres

/// The SQL behind `POST /transfers` (docs/accounts.md, Transfers). Every statement names the request's ledger:
/// ids are per ledger, so another ledger's account 3 is simply not found.
enum TransferQueries {
    /// One row per id of `lookup` that the ledger holds: `(member, name, on_budget)` for each account, keyed by
    /// the member that named it (`fromAccountId`, `toAccountId`), and `('categoryId', title, NULL)` for the
    /// category. One statement, so that a body with several wrong ids is answered with all of them. The
    /// accounts are read `FOR SHARE`: until the transfer's transaction ends, neither can be deleted nor taken
    /// off budget, so the rules checked against this answer still hold when the sides are written.
    static func lookup(_ lookup: TransferLookup, in ledger: LedgerID) -> Query {
        """
        SELECT * FROM (
            SELECT named.member, \(Accounts.alias).name::text, \(Accounts.alias).on_budget
            FROM (VALUES ('fromAccountId', \(lookup.fromAccountID)::bigint), ('toAccountId', \(lookup.toAccountID)::bigint)) AS named (member, id)
            JOIN \(Accounts.table) ON \(Accounts.inLedger(ledger)) AND \(Accounts.idColumn) = named.id
            FOR SHARE OF \(Accounts.alias)) accounts
        UNION ALL
        SELECT 'categoryId', NULL::text, NULL::boolean
        FROM \(Categories.table) WHERE \(Categories.inLedger(ledger)) AND \(Categories.idColumn) = \(lookup.categoryID)::bigint
        """
    }

    /// Both sides in one statement, each naming the other in `transfer_id` (the foreign key is deferred, so
    /// neither has to exist first: migrations/0018): the from side with `+amount` (money out), the to side
    /// with `−amount` (money in), one date, one note. Answers (id, is the from side, the transaction's
    /// `record` columns) per side.
    ///
    /// `ids` draws both ids from the transactions' sequence once (`MATERIALIZED`: each `nextval` runs once,
    /// however often the rows refer to it).
    static func insert(_ transfer: TransferFields, today: Query, in ledger: LedgerID) -> Query {
        let date: Query = "coalesce(\(transfer.date)::date, \(today))"
        return """
            WITH ids AS MATERIALIZED (
                SELECT nextval('transactions_id_seq') AS from_id, nextval('transactions_id_seq') AS to_id),
            t AS (
                INSERT INTO transactions (ledger_id, id, account_id, transfer_id, category_id, title, amount, date, note)
                VALUES (\(ledger), (SELECT from_id FROM ids), \(transfer.fromAccountID), (SELECT to_id FROM ids),
                        \(transfer.fromCategoryID)::bigint, \(transfer.fromTitle), \(transfer.amount), \(date), \(transfer.note)::text),
                       (\(ledger), (SELECT to_id FROM ids), \(transfer.toAccountID), (SELECT from_id FROM ids),
                        \(transfer.toCategoryID)::bigint, \(transfer.toTitle), \(-transfer.amount), \(date), \(transfer.note)::text)
                RETURNING *)
            SELECT t.id, t.account_id = \(transfer.fromAccountID), \(Transactions.writtenRecord)
            """
    }
}
