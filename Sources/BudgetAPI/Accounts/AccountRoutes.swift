import HTTPServer
import Postgres

/// Accounts as a typed resource: `/accounts`, `/accounts/:id` and an account's transactions under it
/// (docs/accounts.md).
struct Accounts: TypedResource {
    static let collection = "accounts"
    static let recordName = "account"
    static let shape = AccountRecord.shape
    static let alias: SQLIdentifier = "a"
    static var joins: Query { AccountQueries.sums }

    /// The account of a nested path, whose id is its transactions' `account_id`.
    static var owner: RecordOwner {
        RecordOwner(
            collection: collection, recordName: recordName, column: "account_id",
            exists: { id, ledger in AccountQueries.exists(id: id, in: ledger) })
    }

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> AccountFields {
        try AccountFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: AccountFields) -> Int64? { fields.id }

    static func insert(_ fields: AccountFields, context: RecordContext) -> Query {
        AccountQueries.insert(fields, today: context.clock.today, in: context.ledger)
    }
    static func replace(id: Int64, with fields: AccountFields, context: RecordContext) -> Query {
        AccountQueries.replace(id: id, with: fields, today: context.clock.today, in: context.ledger)
    }
    static func update(id: Int64, with fields: AccountFields, in ledger: LedgerID) -> Query {
        AccountQueries.update(id: id, with: fields, in: ledger)
    }
    static func seedInsert(_ record: SeedRecord<AccountFields>, context: RecordContext) -> Query {
        AccountQueries.seedInsert(record, today: context.clock.today, in: context.ledger)
    }

    /// The collection and its records, an account's transactions under it, reconciling it, and transfers
    /// between accounts.
    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Accounts>(clock: clock).register(in: &router)
        OwnedRecordRoutes<Transactions>(owner: owner, clock: clock) { members, accountID, prefix in
            try TransactionFields(members, mode: .complete, accountIDFromPath: accountID, fieldPrefix: prefix)
        }.register(in: &router)
        ReconcileRoutes(clock: clock).register(in: &router)
        TransferRoutes(clock: clock).register(in: &router)
    }
}
