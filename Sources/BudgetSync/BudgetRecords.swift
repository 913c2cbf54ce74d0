import BudgetCore
import Foundation

/// A budget category as `/categories` answers it (docs/api.md); `record.decode(BudgetCategory.self)`.
///
/// Prefixed because SwiftUI has a `Transaction` of its own, and apps import both.
///
/// Money is `Money` (BudgetCore), exact in cents, decoded from the number's text, so `400.00` and `3.49` stay exact.
public struct BudgetCategory: Sendable, Hashable, Decodable {
    public var id: Int
    public var title: String
    public var amount: Money
    /// Whether what a month leaves carries into the next (`BudgetLedger`).
    public var rollover: Bool
    public var spent: Money
    public var remaining: Money
    /// UTC timestamps in whole seconds, as the server wrote them (`2026-11-21T08:00:00Z`).
    public var createdAt: String
    public var updatedAt: String
    public var version: Int
}

/// A transaction as `/transactions` answers it (docs/api.md); `record.decode(BudgetTransaction.self)`.
///
/// `amount` above zero is money out, below zero money in (docs/accounts.md, Signs).
public struct BudgetTransaction: Sendable, Hashable, Decodable {
    public var id: Int
    /// Nil only for a transaction in an account: then it is income or uncategorised spending by its sign
    /// (docs/accounts.md).
    public var categoryId: Int?
    public var title: String
    public var amount: Money
    /// A calendar day, `YYYY-MM-DD`: not an instant, so not a `Date`.
    public var date: String
    public var note: String?
    /// The account the money moved in; nil for a transaction kept in its category alone.
    public var accountId: Int?
    /// Whether the bank has it; `.uncleared` when the record has no `cleared` (a server before accounts).
    public var cleared: ClearedState
    /// Who was paid or who paid.
    public var payee: String?
    /// For one side of a transfer, the other side's id.
    public var transferId: Int?
    /// For a part of a split, its parent's id; nil otherwise (docs/splits-and-schedules.md).
    public var parentId: Int?
    /// For the parent of a split, its parts in id order (each with its own transaction `id`); nil otherwise.
    /// The parts are transactions of their own too, with `parentId`: they carry the categories, the parent
    /// the account.
    public var splits: [BudgetSplit]?
    public var createdAt: String
    public var updatedAt: String
    public var version: Int

    private enum CodingKeys: String, CodingKey {
        case id, categoryId, title, amount, date, note, accountId, cleared, payee, transferId, parentId, splits, createdAt, updatedAt
        case version
    }

    /// Whether this is the parent of a split: the account counts it, the categories and months its parts.
    public var isSplit: Bool { splits != nil }

    /// Records from a server before accounts have none of the account members; they decode as a transaction
    /// in no account, uncleared. Records from a server before splits decode as neither parent nor part.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        categoryId = try container.decodeIfPresent(Int.self, forKey: .categoryId)
        title = try container.decode(String.self, forKey: .title)
        amount = try container.decode(Money.self, forKey: .amount)
        date = try container.decode(String.self, forKey: .date)
        note = try container.decodeIfPresent(String.self, forKey: .note)
        accountId = try container.decodeIfPresent(Int.self, forKey: .accountId)
        cleared = try container.decodeIfPresent(ClearedState.self, forKey: .cleared) ?? .uncleared
        payee = try container.decodeIfPresent(String.self, forKey: .payee)
        transferId = try container.decodeIfPresent(Int.self, forKey: .transferId)
        parentId = try container.decodeIfPresent(Int.self, forKey: .parentId)
        splits = try container.decodeIfPresent([BudgetSplit].self, forKey: .splits)
        createdAt = try container.decode(String.self, forKey: .createdAt)
        updatedAt = try container.decode(String.self, forKey: .updatedAt)
        version = try container.decode(Int.self, forKey: .version)
    }
}

/// Whether the bank has seen a transaction (docs/accounts.md, Balances).
public enum ClearedState: String, Sendable, Hashable, Decodable {
    /// Not yet seen at the bank: counts in `balance` and `unclearedBalance`.
    case uncleared
    /// The bank has it: counts in `balance` and `clearedBalance`.
    case cleared
    /// Matched to a bank statement; counts as cleared, and the server locks its amount, date and account.
    case reconciled
}

/// An account as `/accounts` answers it (docs/accounts.md); `record.decode(BudgetAccount.self)`.
///
/// `balance`, `clearedBalance` and `unclearedBalance` are as the server computed them when it last wrote
/// this record: a transaction written since changes them without changing the account, so the feed does
/// not bring them up to date. `BudgetLedger.balances(of:)` computes them from the transactions held.
public struct BudgetAccount: Sendable, Hashable, Decodable {
    public var id: Int
    public var name: String
    /// `checking`, `savings`, `cash`, `credit`, `loan`, `investment` or `other`.
    public var type: String
    /// Whether money coming into it without a category is income (docs/accounts.md, On budget and off budget).
    public var onBudget: Bool
    public var closed: Bool
    public var note: String?
    /// What it held before its first transaction here; counts in every balance, and is not income.
    public var openingBalance: Money
    /// `YYYY-MM-DD`.
    public var openedOn: String
    public var balance: Money
    public var clearedBalance: Money
    public var unclearedBalance: Money
    /// When a reconcile last matched a bank statement; nil if never.
    public var lastReconciledAt: String?
    public var createdAt: String
    public var updatedAt: String
    public var version: Int
}

/// A category's budget for one month, in place of its `amount`, as `/budgets` answers it (docs/api.md, Months).
public struct MonthlyBudget: Sendable, Hashable, Decodable {
    public var id: Int
    public var categoryId: Int
    /// `YYYY-MM`.
    public var month: String
    public var amount: Money
    public var createdAt: String
    public var updatedAt: String
    public var version: Int
}
