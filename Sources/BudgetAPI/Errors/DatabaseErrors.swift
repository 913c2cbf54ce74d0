import HTTPServer
import Postgres

// Database facts get their API meaning here, in one place, keyed on the constraint names of `migrations/`.
// Constraint names, not message text, decide the answer, so a reworded PostgreSQL message changes nothing.

extension PostgresError {
    /// A serialization failure or deadlock: the transaction lost a race and may simply be run again.
    var isConcurrentWrite: Bool {
        sqlState == SQLState.serializationFailure || sqlState == SQLState.deadlockDetected
    }
}

extension APIError {
    /// The error to answer for `error`: its API meaning when it is a database error that has one, else
    /// itself (a database error without one means a bug, and stays a logged 500). `RequestPipeline` renders
    /// what this answers for every request, and a batch for each of its operations.
    static func translating(_ error: any Error) -> any Error {
        guard let error = error as? PostgresError else { return error }
        return APIError(translating: error) ?? error
    }

    /// The API error a database error means, or nil when it means a bug (then it stays a logged 500).
    init?(translating error: PostgresError) {
        if error.isConnectionProblem {
            self = .databaseUnavailable
            return
        }
        switch (error.sqlState, error.constraint) {
        case (SQLState.uniqueViolation, "categories_title_unique"):
            self = .conflict(field: "title", detail: "a category with this title already exists (titles are compared ignoring case)")
        case (SQLState.uniqueViolation, "categories_pkey"), (SQLState.uniqueViolation, "transactions_pkey"),
            (SQLState.uniqueViolation, "budgets_pkey"), (SQLState.uniqueViolation, "accounts_pkey"),
            (SQLState.uniqueViolation, "schedules_pkey"):
            self = .conflict(field: "id", detail: "this id is already taken")
        case (SQLState.uniqueViolation, "transactions_import_id_unique"):
            // A write that raced another for the same key: the check before each write (TakenKey) names the
            // record holding it when it can.
            self = .conflict(field: "importId", detail: TransactionRecord.importIDTaken)
        case (SQLState.uniqueViolation, "documents_pkey"):
            self = .conflict(field: "id", detail: "this collection already has a record with this id")
        case (SQLState.uniqueViolation, "collections_pkey"):
            self = .conflict(field: "name", detail: "a collection with this name already exists")
        case (SQLState.uniqueViolation, "users_name_unique"):
            self = .conflict(field: "name", detail: "a user with this name already exists (names are compared ignoring case)")
        case (SQLState.checkViolation, "memberships_keep_an_owner"):
            // 0016's deferred trigger: the change would leave a ledger without an owner.
            self = .conflict(field: "role", detail: "a ledger keeps at least one owner; make another member owner first")
        case (SQLState.foreignKeyViolation, "access_tokens_membership_fkey"):
            self = .invalidFields([.init(field: "ledgerId", message: "must be the id of one of your ledgers")])
        case (SQLState.sequenceGeneratorLimitExceeded, _):
            // A client chose the largest id, and server-assigned ids only ever follow the largest one taken
            // (docs/api.md), so none is left to assign: the record can still be created under an id of its own.
            self = .conflict(field: "id", detail: "no id is left to assign after the largest one taken (9223372036854775807); send the record's id")
        case (SQLState.uniqueViolation, "budgets_category_month_unique"):
            self = .conflict(field: "month", detail: "this category already has a budget for this month")
        case (SQLState.foreignKeyViolation, "transactions_category_id_fkey"),
            (SQLState.foreignKeyViolation, "budgets_category_id_fkey"):
            self = .invalidFields([.init(field: "categoryId", message: "no category has this id")])
        // Accounts (migrations/0018, docs/accounts.md).
        case (SQLState.uniqueViolation, "accounts_name_unique"):
            self = .conflict(field: "name", detail: "an account with this name already exists (names are compared ignoring case)")
        case (SQLState.foreignKeyViolation, "accounts_keep_their_transactions"):
            self = .conflict(field: "id", detail: "this account has transactions; close it (closed: true) instead of deleting it")
        case (SQLState.foreignKeyViolation, "transactions_account_id_fkey"):
            self = .invalidFields([.init(field: "accountId", message: "no account has this id")])
        case (SQLState.foreignKeyViolation, "transactions_transfer_id_fkey"):
            // Only a seed writes transferId: the other side of the transfer is not in it.
            self = .invalidFields([.init(field: "transferId", message: "no transaction has this id")])
        case (SQLState.checkViolation, "transactions_account_or_category"):
            self = .invalidFields([.init(field: "categoryId", message: "is required unless the transaction has an accountId")])
        case (SQLState.checkViolation, "transactions_reconciled_locked"):
            // The trigger names the locked member the write changed (migrations/0018).
            self = .conflict(
                field: error.column ?? "amount",
                detail: "the transaction is reconciled: its amount, date and accountId are locked until its cleared is set back to cleared")
        // Splits (migrations/0019, docs/api.md): the sum is checked when each statement ends, and names the
        // member the write changed (`splits`, or `amount` when a parent's or a part's amount alone moved).
        case (SQLState.checkViolation, "transactions_splits_add_up"):
            self = .invalidFields([
                .init(
                    field: error.column ?? "splits", message: "a split's parts must add up to its amount exactly, and a split has at least two parts")
            ])
        case (SQLState.checkViolation, "transactions_split_shape"):
            self = .invalidFields([
                .init(
                    field: "splits",
                    message: "a split has no categoryId (its parts name theirs), is no side of a transfer and no part of another split")
            ])
        case (SQLState.checkViolation, "transactions_part_shape"):
            self = .invalidFields([
                .init(
                    field: "parentId",
                    message: "this transaction is a part of a split: it names a category, and no account, transfer, importId or splits of its own")
            ])
        case (SQLState.foreignKeyViolation, "transactions_parts_stay"):
            self = .conflict(field: "parentId", detail: "a part stays with its split: change the parent's splits instead")
        case (SQLState.foreignKeyViolation, "transactions_parts_go_with_parent"):
            self = .conflict(field: "parentId", detail: "a part of a split is deleted with its parent: delete or edit its parent (parentId) instead")
        case (SQLState.checkViolation, "transactions_parts_follow_their_split"):
            // The trigger names the member the write changed: date, title or payee.
            self = .invalidFields([
                .init(field: error.column ?? "date", message: "a part's date, title and payee are its split's: edit the split (parentId) instead")
            ])
        case (SQLState.foreignKeyViolation, "categories_keep_their_split_parts"):
            // Deleting a category deletes its transactions, but a part's money belongs to its split too.
            self = .conflict(
                field: "id", detail: "parts of splits name this category: give them another category, or delete their splits, first")
        case (SQLState.foreignKeyViolation, "transactions_parent_id_fkey"):
            self = .invalidFields([.init(field: "parentId", message: "no transaction has this id")])
        // Schedules (migrations/0019): what Swift cannot check on a body alone, or a PATCH meets.
        case (SQLState.foreignKeyViolation, "schedules_account_id_fkey"):
            self = .invalidFields([.init(field: "accountId", message: "no account has this id")])
        case (SQLState.foreignKeyViolation, "schedules_category_id_fkey"):
            self = .invalidFields([.init(field: "categoryId", message: "no category has this id")])
        case (SQLState.foreignKeyViolation, "schedules_part_category_id_fkey"):
            // The trigger names the part, e.g. splits[1].categoryId.
            self = .invalidFields([.init(field: error.column ?? "splits", message: "no category has this id")])
        case (SQLState.foreignKeyViolation, "accounts_keep_their_schedules"):
            self = .conflict(field: "id", detail: "schedules name this account; delete them or give them another account first")
        case (SQLState.checkViolation, "schedules_end_after_first"):
            self = .invalidFields([.init(field: "endDate", message: "must be on or after firstDate")])
        case (SQLState.checkViolation, "schedules_account_or_category"):
            self = .invalidFields([.init(field: "categoryId", message: "is required unless the schedule has an accountId or splits")])
        case (SQLState.checkViolation, "schedules_category_or_splits"):
            self = .invalidFields([
                .init(field: "categoryId", message: "must be null on a schedule with splits: send splits: null with a categoryId to undo them")
            ])
        case (SQLState.checkViolation, "schedules_splits_add_up"):
            self = .invalidFields([
                .init(field: "splits", message: "the parts must add up to the amount exactly: send amount and splits together to change both")
            ])
        case (SQLState.invalidRegularExpression, _):
            // An invalid `_like` (or `:like`) pattern is the client's mistake, a 400, not json-server's 500
            // (docs/json-server.md).
            self = .malformedQuery("a _like pattern is not a valid regular expression (\(error.message ?? "rejected by PostgreSQL"))")
        case (SQLState.characterNotInRepertoire, _), (SQLState.untranslatableCharacter, _):
            // A NUL byte (or `\u0000`) somewhere in what the client sent: PostgreSQL text cannot hold it.
            self = .malformedInput("a value holds a NUL byte (\\u0000), which cannot be stored or compared")
        case (SQLState.queryCanceled, _):
            // Only statement_timeout cancels our queries; the transaction rolled back with it.
            self = .queryTimedOut
        case _ where error.isConcurrentWrite:
            // Database.withinTransaction runs its body again on this; elsewhere the client sees a 409.
            self = .concurrentWrite
        default:
            return nil
        }
    }
}
