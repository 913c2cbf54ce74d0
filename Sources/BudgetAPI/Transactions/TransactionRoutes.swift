import BudgetCore
import HTTPServer
import Postgres

/// Transactions as a typed resource: `/transactions` and `/transactions/:id` (docs/api.md).
struct Transactions: CategoryChild, CombinableInserts {
    static let collection = "transactions"
    static let recordName = "transaction"
    static let members = TransactionRecord.members
    static let listFormats = ListFormat.jsonOrCSV

    /// The JSON list's rows and filters, each row with its category's title (`TransactionRecord.csvRecord`);
    /// `_expand` is refused with CSV (`ListAnswer`), so the source need not consider it.
    static func csvListSource(for request: Request, context: RecordContext) throws -> ListSource {
        var source = plainSource(in: context.ledger)
        source.element = .plain(TransactionRecord.csvRecord)
        source.lookup = TransactionRecord.categoryTitles(in: context.ledger)
        return source
    }

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> TransactionFields {
        try TransactionFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func fields(from members: JSONObject, categoryIDFromPath: Int64, fieldPrefix: String) throws -> TransactionFields {
        try TransactionFields(members, mode: .complete, categoryIDFromPath: categoryIDFromPath, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: TransactionFields) -> Int64? { fields.id }

    static func insert(_ fields: TransactionFields, context: RecordContext) -> Query {
        TransactionQueries.insert(fields, today: context.clock.today, in: context.ledger)
    }
    static func insertRow(_ fields: TransactionFields, context: RecordContext) -> Query? {
        fields.splitParts == nil ? TransactionQueries.row(fields, today: context.clock.today, in: context.ledger) : nil
    }
    static func insert(rows: [Query]) -> Query {
        TransactionQueries.insert(rows: rows)
    }
    static func replace(id: Int64, with fields: TransactionFields, context: RecordContext) -> Query {
        TransactionQueries.replace(id: id, with: fields, today: context.clock.today, in: context.ledger)
    }
    static func update(id: Int64, with fields: TransactionFields, in ledger: LedgerID) -> Query {
        TransactionQueries.update(id: id, with: fields, in: ledger)
    }
    static func seedInsert(_ record: SeedRecord<TransactionFields>, context: RecordContext) -> Query {
        TransactionQueries.seedInsert(record, today: context.clock.today, in: context.ledger)
    }
    static func delete(id: Int64, in ledger: LedgerID) -> Query {
        TransactionQueries.delete(id: id, in: ledger)
    }
    static func exportRows(in ledger: LedgerID) -> Query {
        TransactionQueries.exportRows(in: ledger)
    }

    static let constraints: [ResourceConstraint] = [
        // A write that raced another for the same key: the check before each write (`takenKey`) names the
        // record holding it when it can.
        .unique("transactions_import_id_unique", field: "importId", detail: TransactionRecord.importIDTaken),
        .foreignKey("transactions_category_id_fkey", field: "categoryId", references: Categories.self),
        // Accounts (migrations/0018, docs/accounts.md).
        .foreignKey("transactions_account_id_fkey", field: "accountId", references: Accounts.self),
        // Only a seed writes transferId: the other side of the transfer is not in it.
        .foreignKey("transactions_transfer_id_fkey", field: "transferId", references: Transactions.self),
        .check("transactions_account_or_category", field: "categoryId", message: "is required unless the transaction has an accountId"),
        // The trigger names the locked member the write changed (migrations/0018).
        .check(
            "transactions_reconciled_locked", field: "amount",
            conflict: "the transaction is reconciled: its amount, date and accountId are locked until its cleared is set back to cleared",
            namesColumn: true),
        // Splits (migrations/0019, docs/api.md): the sum is checked when each statement ends, and names the
        // member the write changed (`splits`, or `amount` when a parent's or a part's amount alone moved).
        .check(
            "transactions_splits_add_up", field: "splits",
            message: "a split's parts must add up to its amount exactly, and a split has at least two parts", namesColumn: true),
        .check(
            "transactions_split_shape", field: "splits",
            message: "a split has no categoryId (its parts name theirs), is no side of a transfer and no part of another split"),
        .check(
            "transactions_part_shape", field: "parentId",
            message: "this transaction is a part of a split: it names a category, and no account, transfer, importId or splits of its own"),
        .keeps("transactions_parts_stay", field: "parentId", detail: "a part stays with its split: change the parent's splits instead"),
        .keeps(
            "transactions_parts_go_with_parent", field: "parentId",
            detail: "a part of a split is deleted with its parent: delete or edit its parent (parentId) instead"),
        // The trigger names the member the write changed: date, title or payee.
        .check(
            "transactions_parts_follow_their_split", field: "date",
            message: "a part's date, title and payee are its split's: edit the split (parentId) instead", namesColumn: true),
        .foreignKey("transactions_parent_id_fkey", field: "parentId", references: Transactions.self),
    ]

    static func missingReferences(_ fields: TransactionFields, in ledger: LedgerID) -> MissingReferences? {
        guard let parts = fields.splitParts else { return nil }
        return MissingReferences(query: TransactionQueries.missingPartCategories(parts, in: ledger)) { index in
            .init(field: "splits[\(index)].categoryId", message: "no category has this id")
        }
    }

    static func takenKey(_ fields: TransactionFields, excluding id: Int64?, in ledger: LedgerID) -> TakenKey? {
        guard case .some(.some(let importID)) = fields.importID else { return nil }
        // Import ids are unique per account (migrations/0018): the holder is in the account the write leaves
        // the record in, which a write that does not name one keeps.
        let account: Query =
            switch (fields.accountID, id) {
            case (.some(let accountID), _): "\(accountID)::bigint"
            case (nil, let id?): "(SELECT s.account_id FROM transactions s WHERE s.ledger_id = \(ledger) AND s.id = \(id))"
            case (nil, nil): "NULL::bigint"
            }
        return TakenKey(
            field: "importId", detail: TransactionRecord.importIDTaken,
            holder: """
                SELECT t.id FROM transactions t
                WHERE \(inLedger(ledger)) AND t.import_id = \(importID) AND t.account_id IS NOT DISTINCT FROM \(account)
                  AND t.id IS DISTINCT FROM \(id)::bigint
                """,
            collection: collection)
    }

    /// The collection and its records, and a category's transactions under it.
    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Transactions>(clock: clock).register(in: &router)
        StatementImport().register(in: &router)
        CategoryChildRoutes<Transactions>(clock: clock).register(in: &router)
    }

    static func combinableCreates(clock: CivilClock) -> [RouteSignature: CombinableCreate] {
        RecordRoutes<Transactions>(clock: clock).combinableCreates().merging(
            CategoryChildRoutes<Transactions>(clock: clock).routes.combinableCreates(), uniquingKeysWith: { first, _ in first })
    }
}
