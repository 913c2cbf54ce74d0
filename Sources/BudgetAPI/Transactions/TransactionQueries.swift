import Postgres

/// The SQL behind the transaction routes beyond the statements `TypedResource` builds from the members (`Transactions.members`).
enum TransactionQueries {

    /// A scalar subquery: the JSON array, in id order, of the transactions that `condition` picks (over alias `t`).
    static func jsonArray(where condition: Query) -> Query {
        let element = SQLFragments.jsonObject(columns: TransactionRecord.shape.record.renderedColumns)
        return "(SELECT \(SQLFragments.jsonArray(of: element, orderBy: "t.id"))::json FROM transactions t WHERE \(condition))"
    }

    /// Writes answer (id, created, `record` columns) from the written row `t` (see `TypedResource`).
    private static var answer: Query { Transactions.writtenRecord }

    /// The columns every write names after `ledger_id` and `id`, from the members (`TransactionRecord.members`).
    private static var columns: Query { Transactions.members.columns }

    /// `fields`' values for `columns`: what a create gives a member the request left out (today's date,
    /// `uncleared`, NULL).
    private static func values(_ fields: TransactionFields, today: Query) -> Query {
        Transactions.members.values(fields, today: today)
    }

    /// Inserts under the client's id, or the next server id when it gave none; the date defaults to `today`
    /// (`CivilClock.today`). A split and its parts are one statement: the database checks that they add up
    /// when the statement ends (migrations/0019).
    static func insert(_ fields: TransactionFields, today: Query, in ledger: LedgerID) -> Query {
        // A plain transaction answers from its own RETURNING: no CTE to scan and no parts' subquery to plan, the
        // cheapest statement for PostgreSQL of the most frequent write (bench/README.md, "The write path").
        guard let parts = fields.splitParts else { return insert(rows: [row(fields, today: today, in: ledger)]) }
        return """
            WITH t AS (
                INSERT INTO transactions (ledger_id, id, \(columns), split)
                VALUES (\(ledger), \(Transactions.newID(fields)), \(values(fields, today: today)), true)
                RETURNING *),
            \(insertParts(parts))
            SELECT t.id, true, \(answerWithNewParts)
            """
    }

    /// A plain transaction's VALUES row for `insert(rows:)`: under the client's id or the next server id, the
    /// date defaulting to `today`.
    static func row(_ fields: TransactionFields, today: Query, in ledger: LedgerID) -> Query {
        "(\(ledger), \(Transactions.newID(fields)), \(values(fields, today: today)))"
    }

    /// Inserts plain transactions (no parts), one per element of `rows` (`row`), answering each from its own
    /// RETURNING in the order of `rows`: PostgreSQL's executor inserts a VALUES list's rows in their order and
    /// returns each as it inserts it. An atomic batch writes a run of creates this way (`CombinableCreate`).
    static func insert(rows: [Query]) -> Query {
        """
        INSERT INTO transactions AS t (ledger_id, id, \(columns))
        VALUES \(Query.joined(rows, separator: ", "))
        RETURNING t.id, true, \(TransactionRecord.unsplitColumns)
        """
    }

    /// PUT: replaces the transaction with this id, or creates it under this id; the first column says which.
    ///
    /// A body without `importId`, `accountId`, `cleared` or `payee` keeps the stored one (see
    /// `TransactionRecord.members`). A body without `splits` keeps a split's parts for the same reason; `null`
    /// makes it a plain transaction again, and parts replace the old ones.
    static func replace(id: Int64, with fields: TransactionFields, today: Query, in ledger: LedgerID) -> Query {
        let keepsParts: [Query] = fields.splits != nil ? ["split = excluded.split"] : []
        let assignments = Query.joined(
            Transactions.members.replacements(fields) + keepsParts + ["version = existing.version + 1, updated_at = now()"], separator: ", ")
        // A body without `splits` writes the statement it always did.
        let (split, isSplit): (Query, Query) = fields.splits == nil ? ("", "") : (", split", ", \(fields.splitParts != nil)")
        let upsert: Query = """
            t AS (
                INSERT INTO transactions AS existing (ledger_id, id, \(columns)\(split))
                VALUES (\(ledger), \(id), \(values(fields, today: today))\(isSplit))
                ON CONFLICT (ledger_id, id) DO UPDATE SET \(assignments)
                RETURNING *, xmax = 0 AS inserted)
            """
        switch fields.splits {
        case nil:
            return "WITH \(upsert) SELECT t.id, t.inserted, \(answer)"
        case .some(nil):
            return "WITH \(deleteParts(of: id, in: ledger)), \(upsert) SELECT t.id, t.inserted, \(answer)"
        case .some(.some(let parts)):
            return "WITH \(deleteParts(of: id, in: ledger)), \(upsert), \(insertParts(parts)) SELECT t.id, t.inserted, \(answerWithNewParts)"
        }
    }

    /// PATCH: changes only the fields given; no row means no such transaction.
    static func update(id: Int64, with fields: TransactionFields, in ledger: LedgerID) -> Query {
        let assignments = Transactions.members.assignments(fields)
        guard let splits = fields.splits else { return Transactions.updateStatement(id: id, setting: assignments, in: ledger) }
        // The old parts go, and new ones come, in the statement that changes the parent (see `insert`).
        let set = Query.joined(
            ["version = version + 1, updated_at = now()", splits == nil ? "split = false" : "split = true, category_id = NULL"] + assignments,
            separator: ", ")
        let update: Query = "t AS (UPDATE transactions t SET \(set) WHERE \(Transactions.inLedger(ledger)) AND t.id = \(id) RETURNING t.*)"
        guard let parts = splits else {
            return "WITH \(deleteParts(of: id, in: ledger)), \(update) SELECT t.id, false, \(answer)"
        }
        return "WITH \(deleteParts(of: id, in: ledger)), \(update), \(insertParts(parts)) SELECT t.id, false, \(answerWithNewParts)"
    }

    /// DELETE: a part goes with its parent only, so `refuse_deleting_part` raises the 409 for one
    /// (migrations/0019); deleting a split deletes its parts, each with its tombstone.
    static func delete(id: Int64, in ledger: LedgerID) -> Query {
        Transactions.deleteStatement(
            where: "t.id = \(id) AND (t.parent_id IS NULL OR refuse_deleting_part(t.ledger_id, t.id, t.parent_id))", in: ledger)
    }
}

// Splits (migrations/0019): a parent with `split`, and its parts, each a transaction with `parent_id`.
extension TransactionQueries {
    /// What a write that inserted parts answers: the parts the CTE `parts` wrote, which the statement's
    /// snapshot (taken before it ran) does not hold.
    private static var answerWithNewParts: Query {
        let columns = TransactionRecord.shape.fields.map { field -> Query in
            field.name == "splits" ? "(SELECT \(TransactionRecord.partsArray) FROM parts part)" : field.sql
        }
        return "\(Query.joined(columns, separator: ", ")) FROM t"
    }

    /// A CTE deleting the parts of the ledger's transaction `id` (none for a plain transaction or a part).
    private static func deleteParts(of id: Int64, in ledger: LedgerID) -> Query {
        "old_parts AS (DELETE FROM transactions old WHERE old.ledger_id = \(ledger) AND old.parent_id = \(id))"
    }

    /// The CTE `parts`: `parts` inserted under the split the CTE `t` wrote, in the order given, each under its
    /// seed id or the sequence's next, with the parent's title, date and payee (which migrations/0019 keeps
    /// equal to the parent's) and no account: the parent's account holds the money once.
    static func insertParts(_ parts: [SplitPart]) -> Query {
        var ids = PostgresArrayLiteral()
        var categories = PostgresArrayLiteral()
        var amounts = PostgresArrayLiteral()
        var notes = PostgresArrayLiteral()
        for part in parts {
            if let id = part.id { ids.append(String(id)) } else { ids.appendNull() }
            categories.append(String(part.categoryID))
            amounts.append(part.amount.description)
            if let note = part.note { notes.append(note) } else { notes.appendNull() }
        }
        return """
            parts AS (
                INSERT INTO transactions (ledger_id, id, parent_id, category_id, title, amount, date, note, payee, created_at, updated_at)
                SELECT t.ledger_id, coalesce(p.id, nextval('transactions_id_seq')), t.id, p.category_id, t.title, p.amount, t.date, p.note,
                       t.payee, t.updated_at, t.updated_at
                FROM t, unnest(\(ids)::bigint[], \(categories)::bigint[], \(amounts)::numeric[], \(notes)::text[])
                        WITH ORDINALITY AS p (id, category_id, amount, note, n)
                ORDER BY p.n
                RETURNING id, category_id, amount, note)
            """
    }

    /// The indexes of a split's parts whose category the ledger does not have: checked before the write, so
    /// that the 422 names the part (`splits[1].categoryId`) where the foreign key would name none.
    static func missingPartCategories(_ parts: [SplitPart], in ledger: LedgerID) -> Query {
        """
        SELECT p.n - 1 FROM unnest(\(parts.map(\.categoryID))::bigint[]) WITH ORDINALITY AS p (category_id, n)
        WHERE NOT EXISTS (SELECT FROM categories c WHERE \(Categories.inLedger(ledger)) AND c.id = p.category_id)
        ORDER BY p.n
        """
    }

    /// A transaction under its seed id (or the next server id), with the other side of its transfer;
    /// `date` defaults to today as over the API. The transfer's foreign key is checked at commit
    /// (migrations/0018), so the two sides load in either order. A split brings its parts, with their ids,
    /// in the same statement.
    static func seedInsert(_ record: SeedRecord<TransactionFields>, today: Query, in ledger: LedgerID) -> Query {
        let fields = record.fields
        let (split, isSplit): (Query, Query) = fields.splitParts == nil ? ("", "") : (", split", ", true")
        let insert: Query = """
            INSERT INTO transactions (ledger_id, id, \(Transactions.members.seedColumns)\(split))
            VALUES (\(ledger), \(Transactions.newID(fields)), \(Transactions.members.seedValues(record, today: today))\(isSplit))
            """
        guard let parts = fields.splitParts else { return insert }
        return "WITH t AS (\(insert) RETURNING *), \(insertParts(parts)) SELECT FROM t"
    }

    /// Every transaction of the ledger with its exported members in id order, but the parts of splits, which
    /// their parent's `splits` holds (and a seed recreates from it).
    static func exportRows(in ledger: LedgerID) -> Query {
        """
        SELECT \(TransactionRecord.shape.exported.columns) FROM transactions t
        WHERE \(Transactions.inLedger(ledger)) AND t.parent_id IS NULL ORDER BY t.id
        """
    }
}
