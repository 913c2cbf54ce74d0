import BudgetCore
import HTTPServer
import Postgres

/// `POST /transfers`: money moved from one of the ledger's accounts to another, written as two transactions
/// that name each other (docs/accounts.md, Transfers). `transfers` is a reserved collection name; the route
/// takes POST only, so any other method is the router's 405.
///
/// A transfer is a request, not a record: there is nothing to list or read under `/transfers`. Each side is
/// an ordinary transaction afterwards, read, edited and deleted through `/transactions/{id}`; migration 0018's
/// triggers keep the two sides' amount and date in step and delete both together.
struct TransferRoutes: Sendable {
    static let path = "/transfers"

    /// What today is, for a transfer without a `date`.
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        router.post(Self.path) { request, database in try await create(request, database: database) }
    }

    /// Validates the body, reads the two accounts (and the category) in one statement, and writes both sides
    /// in another: `201 {"from": …, "to": …}` with each side as `GET /transactions/{id}` renders it, and
    /// `Location` naming the from side.
    func create(_ request: Request, database: Database) async throws -> Response {
        let transfer = try TransferRequest(try RequestBody.object(request))
        let lookup = transfer.lookedUp
        // One transaction: the lookup's share locks keep the accounts as they were read until the insert.
        let sides = try await database.withinTransaction(commitIf: { _ in true }) { database in
            let facts =
                lookup.isEmpty
                ? TransferFacts() : try await TransferFacts(database.query(TransferQueries.lookup(lookup, in: database.ledger)))
            var attempt = transfer  // a run again after a serialization failure starts from the request as read
            let fields = try attempt.validated(against: facts)
            return try TransferSides(try await database.query(TransferQueries.insert(fields, today: clock.today, in: database.ledger)))
        }
        var response = Response.json(sides.json, status: .created)
        response.headers.replaceOrAdd("Location", "/\(Transactions.collection)/\(sides.fromID)")
        return response
    }
}

/// A transfer body as read, before the accounts and the category it names have been looked up; every invalid
/// member is collected first, so that one 422 names them all.
struct TransferRequest {
    /// The members in the order a 422 lists them.
    static let members = ["fromAccountId", "toAccountId", "amount", "date", "title", "note", "categoryId"]

    private var reader: FieldReader
    private let fromAccountID: Int64?
    private let toAccountID: Int64?
    private let amount: Money?
    private let date: String?
    private let title: String?
    private let note: String?
    private let categoryID: Int64?

    init(_ members: JSONObject) throws {
        var reader = FieldReader(members)
        reader.rejectUnknown(known: Set(Self.members), ignored: [])
        for name in ["fromAccountId", "toAccountId", "amount"] { reader.require(name) }
        fromAccountID = reader.id("fromAccountId")
        var toAccountID = reader.id("toAccountId")
        if let from = fromAccountID, toAccountID == from {
            reader.fail("toAccountId", "must be another account than fromAccountId")
            toAccountID = nil
        }
        self.toAccountID = toAccountID
        var amount = reader.money("amount")
        // The direction is in the account ids; a negative amount would say it twice, and zero moves nothing.
        if let given = amount, given.cents <= 0 {
            reader.fail("amount", "must be more than 0: it is what leaves fromAccountId for toAccountId")
            amount = nil
        }
        self.amount = amount
        date = reader.day("date")
        title = reader.string("title", length: 1...200)
        // `null` is a client's way of saying "none", as on a transaction.
        note = reader.isNull("note") ? nil : reader.string("note", length: 0...2000)
        categoryID = reader.isNull("categoryId") ? nil : reader.id("categoryId")
        self.reader = reader
    }

    /// The ids the lookup statement reads: only those well formed, so an invalid one is not also "unknown".
    var lookedUp: TransferLookup {
        TransferLookup(fromAccountID: fromAccountID, toAccountID: toAccountID, categoryID: categoryID)
    }

    /// The fields to write, or the 422 naming every invalid member: the body's own mistakes, then accounts and
    /// a category that are not the ledger's, then the category rules of docs/accounts.md.
    mutating func validated(against facts: TransferFacts) throws -> TransferFields {
        if fromAccountID != nil, facts.from == nil { reader.fail("fromAccountId", "no account has this id") }
        if toAccountID != nil, facts.to == nil { reader.fail("toAccountId", "no account has this id") }
        var categoryIsAllowed = true
        if let from = facts.from, let to = facts.to {
            switch (from.isOnBudget, to.isOnBudget) {
            case (true, true) where categoryID != nil:
                reader.fail("categoryId", "must be left out: money moved between two on-budget accounts stays in the budget")
                categoryIsAllowed = false
            case (false, false) where categoryID != nil:
                reader.fail("categoryId", "must be left out: neither account is on budget")
                categoryIsAllowed = false
            case (true, false) where categoryID == nil && (!reader.has("categoryId") || reader.isNull("categoryId")):
                reader.fail("categoryId", "is required: money leaving the budget for an off-budget account is spending")
            default:
                break
            }
        }
        if categoryIsAllowed, categoryID != nil, !facts.categoryExists { reader.fail("categoryId", "no category has this id") }

        guard reader.errors.isEmpty, let fromAccountID, let toAccountID, let amount, let from = facts.from, let to = facts.to else {
            throw APIError.invalidFields(Self.inMemberOrder(reader.errors))
        }
        // The category belongs on the on-budget side: spending out of it (from on → off budget), or money
        // into it from an off-budget account (a loan paid out, say), which may name a category or count as income.
        return TransferFields(
            fromAccountID: fromAccountID, toAccountID: toAccountID, amount: amount, date: date, note: note,
            fromCategoryID: from.isOnBudget ? categoryID : nil,
            toCategoryID: from.isOnBudget ? nil : categoryID,
            fromTitle: title ?? "Transfer to \(to.name)",
            toTitle: title ?? "Transfer from \(from.name)")
    }

    /// `errors` ordered by member, each member's errors in the order found; unknown members come first.
    private static func inMemberOrder(_ errors: [Problem.FieldError]) -> [Problem.FieldError] {
        errors.enumerated()
            .sorted { ((members.firstIndex(of: $0.element.field) ?? -1), $0.offset) < ((members.firstIndex(of: $1.element.field) ?? -1), $1.offset) }
            .map(\.element)
    }
}

/// The ids a transfer names, looked up in the request's ledger.
struct TransferLookup: Sendable {
    let fromAccountID: Int64?
    let toAccountID: Int64?
    let categoryID: Int64?

    var isEmpty: Bool { fromAccountID == nil && toAccountID == nil && categoryID == nil }
}

/// What the lookup found in the ledger: each account's name and whether it is on budget, and whether the
/// category exists.
struct TransferFacts {
    struct Account {
        let name: String
        let isOnBudget: Bool
    }

    private(set) var from: Account?
    private(set) var to: Account?
    private(set) var categoryExists = false

    /// Nothing found: what a body naming no well-formed id is checked against.
    init() {}

    /// The rows of `TransferQueries.lookup`: (member, name, on budget), one per id found.
    init(_ result: QueryResult) throws {
        for row in result {
            let member = try row.decode(String.self, at: 0)
            switch member {
            case "categoryId":
                categoryExists = true
            default:
                let account = Account(name: try row.decode(String.self, at: 1), isOnBudget: try row.decode(Bool.self, at: 2))
                if member == "fromAccountId" { from = account } else { to = account }
            }
        }
    }
}

/// A transfer ready to write: both sides' accounts, categories and titles, one amount and one date.
struct TransferFields: Sendable {
    let fromAccountID: Int64
    let toAccountID: Int64
    /// More than zero: the from side's amount (money out); the to side's is its negation (money in).
    let amount: Money
    /// `YYYY-MM-DD`; nil means today in the server's time zone.
    let date: String?
    let note: String?
    let fromCategoryID: Int64?
    let toCategoryID: Int64?
    let fromTitle: String
    let toTitle: String
}

/// The two transactions the insert wrote, each rendered as `GET /transactions/{id}` renders it.
struct TransferSides: Sendable {
    let fromID: Int64
    /// `{"from":{…},"to":{…}}`.
    let json: [UInt8]

    /// The rows of `TransferQueries.insert`: (id, is the from side, the transaction's record columns).
    init(_ result: QueryResult) throws {
        var from: (id: Int64, json: [UInt8])?
        var to: [UInt8]?
        for row in result {
            let json = Transactions.shape.record.json(row, from: 2)
            if try row.decode(Bool.self, at: 1) { from = (try row.decode(Int64.self, at: 0), json) } else { to = json }
        }
        guard let from, let to else { preconditionFailure("a transfer's INSERT … RETURNING answered \(result.count) rows, not its two sides") }
        fromID = from.id
        json = Array(#"{"from":"#.utf8) + from.json + Array(#","to":"#.utf8) + to + [UInt8(ascii: "}")]
    }
}
