import Postgres

/// The SQL behind the account routes; the only place that knows accounts' column names.
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

    /// Writes answer (id, created, `record` columns) from the written row `a` (see `TypedResource`).
    private static var answer: Query { Accounts.writtenRecord }

    /// The columns every write names after `ledger_id` and `id`, in the order `values(_:today:)` gives them.
    private static let columns: Query = "name, type, on_budget, closed, note, opening_balance, opened_on"

    /// `fields`' values for `columns`, with what a create gives a member the request left out: on budget as
    /// the type has it, open, no note, an opening balance of 0.00, opened today.
    private static func values(_ fields: AccountFields, today: Query) -> Query {
        """
        \(fields.name), \(fields.type)::text, \(fields.isOnBudget)::boolean, coalesce(\(fields.closed)::boolean, false),
        \(fields.note ?? nil)::text, coalesce(\(fields.openingBalance)::numeric, 0.00), coalesce(\(fields.openedOn)::date, \(today))
        """
    }

    /// Inserts an account under the client's id, or the next server id when it gave none.
    static func insert(_ fields: AccountFields, today: Query, in ledger: LedgerID) -> Query {
        """
        WITH a AS (
            INSERT INTO accounts (ledger_id, id, \(columns))
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('accounts_id_seq')), \(values(fields, today: today)))
            RETURNING *)
        SELECT a.id, true, \(answer)
        """
    }

    /// PUT: replaces the account with this id, or creates it under this id; the first column says which. A
    /// body without `openedOn` keeps the stored day: it is when the opening balance was true, which a
    /// replace that does not mention it has no reason to move.
    static func replace(id: Int64, with fields: AccountFields, today: Query, in ledger: LedgerID) -> Query {
        let openedOn: Query = fields.openedOn == nil ? "" : ", opened_on = excluded.opened_on"
        return """
            WITH a AS (
                INSERT INTO accounts AS existing (ledger_id, id, \(columns))
                VALUES (\(ledger), \(id), \(values(fields, today: today)))
                ON CONFLICT (ledger_id, id) DO UPDATE
                    SET name = excluded.name, type = excluded.type, on_budget = excluded.on_budget, closed = excluded.closed,
                        note = excluded.note, opening_balance = excluded.opening_balance\(openedOn),
                        version = existing.version + 1, updated_at = now()
                RETURNING *, xmax = 0 AS inserted)
            SELECT a.id, a.inserted, \(answer)
            """
    }

    /// PATCH: changes only the fields given; no row means no such account. A new `type` alone leaves
    /// `onBudget` as it was: the default applies when an account is written whole.
    static func update(id: Int64, with fields: AccountFields, in ledger: LedgerID) -> Query {
        var assignments: [Query] = []
        if let name = fields.name { assignments.append("name = \(name)") }
        if let type = fields.type { assignments.append("type = \(type)") }
        if let onBudget = fields.onBudget { assignments.append("on_budget = \(onBudget)") }
        if let closed = fields.closed { assignments.append("closed = \(closed)") }
        if let note = fields.note { assignments.append("note = \(note)::text") }
        if let openingBalance = fields.openingBalance { assignments.append("opening_balance = \(openingBalance)") }
        if let openedOn = fields.openedOn { assignments.append("opened_on = \(openedOn)::date") }
        return Accounts.updateStatement(id: id, setting: assignments, in: ledger)
    }

    /// An account under its seed id (or the next server id), with the times, version and last
    /// reconciliation an export wrote.
    static func seedInsert(_ record: SeedRecord<AccountFields>, today: Query, in ledger: LedgerID) -> Query {
        let fields = record.fields
        return """
            INSERT INTO accounts (ledger_id, id, \(columns), last_reconciled_at, created_at, updated_at, version)
            VALUES (\(ledger), coalesce(\(fields.id)::bigint, nextval('accounts_id_seq')), \(values(fields, today: today)),
                    \(fields.lastReconciledAt)::timestamptz,
                    coalesce(\(record.createdAt)::timestamptz, now()), coalesce(\(record.updatedAt)::timestamptz, now()),
                    coalesce(\(record.version)::integer, 1))
            """
    }
}
