import BudgetCore
import HTTPServer
import Postgres

/// Accounts as a typed resource: `/accounts`, `/accounts/:id` and an account's transactions under it
/// (docs/accounts.md).
struct Accounts: TypedResource {
    static let collection = "accounts"
    static let recordName = "account"
    static let members = AccountRecord.members
    static var joins: Query { AccountQueries.sums }

    static let constraints: [ResourceConstraint] = [
        .unique("accounts_name_unique", field: "name", detail: "an account with this name already exists (names are compared ignoring case)"),
        .keeps(
            "accounts_keep_their_transactions", field: "id", detail: "this account has transactions; close it (closed: true) instead of deleting it"),
        .keeps("accounts_keep_their_schedules", field: "id", detail: "schedules name this account; delete them or give them another account first"),
    ]

    /// The account of a nested path, which its transactions name by their foreign key to accounts.
    static var owner: RecordOwner {
        RecordOwner(Accounts.self, of: Transactions.self) { id, ledger in AccountQueries.exists(id: id, in: ledger) }
    }

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> AccountFields {
        try AccountFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: AccountFields) -> Int64? { fields.id }

    /// The collection and its records, an account's transactions under it, reconciling it, and transfers
    /// between accounts.
    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Accounts>(clock: clock).register(in: &router)
        transactionRoutes(clock: clock).register(in: &router)
        ReconcileRoutes(clock: clock).register(in: &router)
        TransferRoutes(clock: clock).register(in: &router)
    }

    /// `/accounts/:id/transactions`.
    static func transactionRoutes(clock: CivilClock) -> OwnedRecordRoutes<Transactions> {
        OwnedRecordRoutes<Transactions>(owner: owner, clock: clock) { members, accountID, prefix in
            try TransactionFields(members, mode: .complete, accountIDFromPath: accountID, fieldPrefix: prefix)
        }
    }

    static func combinableCreates(clock: CivilClock) -> [RouteSignature: CombinableCreate] {
        transactionRoutes(clock: clock).combinableCreates()
    }
}
