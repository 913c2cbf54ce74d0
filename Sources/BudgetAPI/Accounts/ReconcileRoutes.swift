import BudgetCore
import HTTPServer
import Postgres

/// `POST /accounts/{id}/reconcile {balance, date, adjust?}`: matches an account's cleared balance to a bank
/// statement's (docs/accounts.md, Reconciling). When they agree, the cleared transactions up to `date` become
/// reconciled and the account's `lastReconciledAt` is set; when they do not, a 409 says by how much, unless
/// `adjust` books the difference as one adjustment transaction first. A closed account reconciles like any.
struct ReconcileRoutes: Sendable {
    static let path = "/accounts/:id/reconcile"

    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        router.post(Self.path) { request, database in try await reconcile(request, database: database) }
    }

    /// `200` with the account as `GET /accounts/{id}` renders it; 404 for an account the ledger does not have.
    func reconcile(_ request: Request, database: Database) async throws -> Response {
        let id = try recordID(request)
        let statement = try ReconcileRequest(try RequestBody.object(request))
        let context = RecordContext(clock: clock, ledger: database.ledger)
        let read = try Accounts.find(id: id, for: request, context: context)
        // One transaction: the reconcile statement locks the account, and the account read afterwards is the
        // one it left (its balances count the adjustment, which the statement itself cannot see).
        let json = try await database.withinTransaction(commitIf: { _ in true }) { transaction in
            let result: QueryResult
            do {
                result = try await transaction.query(
                    ReconcileQueries.reconcile(
                        id: id, balance: statement.balance, date: statement.date, adjust: statement.adjust, in: transaction.ledger))
            } catch let error as PostgresError where error.sqlState == SQLState.numericValueOutOfRange {
                // Only the adjustment's amount (cleared − balance) can leave numeric(14,2): both are in range.
                throw APIError.invalidFields([
                    .init(
                        field: "balance", message: "is too far from the cleared balance to book the difference as one transaction")
                ])
            }
            guard result.count > 0 else { throw APIError.notFound(resource: Accounts.recordName, id: id) }
            let clearedBalance = try Money(parsing: try result[0].decode(String.self, at: 0))
            guard try result[0].decode(Bool.self, at: 1) else {
                throw ReconcileError.unbalanced(clearedBalance: clearedBalance, balance: statement.balance, date: statement.date)
            }
            guard let json = try await Self.render(read, database: transaction) else {
                preconditionFailure("the account reconciled in this transaction was not found by the read after it")
            }
            return json
        }
        // The body is the account as GET /accounts/{id} answers it: Content-Location says so, and the ETag
        // the server's tagging gives it for that is the one the GET gives (RFC 9110 §8.7).
        var response = Response.json(json)
        response.headers.add("Content-Location", "/\(Accounts.collection)/\(id)")
        return response
    }

    /// The record `read` reads, as its GET renders it; nil when there is none.
    private static func render(_ read: RecordRead, database: Database) async throws -> [UInt8]? {
        switch read {
        case .plain(let query, let record):
            let result = try await database.query(query)
            return result.count > 0 ? record.json(result[0], from: 0) : nil
        case .rendered(let query):
            return try await database.query(query).firstJSON()
        }
    }
}

/// A reconcile body: the statement's `balance` (money, 422 otherwise), its `date` (`YYYY-MM-DD`; another
/// form is a malformed request, 400) and whether to `adjust` for a difference (false when left out).
struct ReconcileRequest {
    static let members: Set<String> = ["balance", "date", "adjust"]

    let balance: Money
    let date: String
    let adjust: Bool

    init(_ members: JSONObject) throws {
        var reader = FieldReader(members)
        if let value = members["date"], !Self.isDay(value) {
            throw APIError.invalidParameter("date", "must be a date written YYYY-MM-DD")
        }
        reader.rejectUnknown(known: Self.members, ignored: [])
        reader.require("balance")
        reader.require("date")
        let balance = reader.money("balance")
        let date = reader.day("date")
        let adjust = reader.bool("adjust")
        guard reader.errors.isEmpty, let balance, let date else { throw APIError.invalidFields(reader.errors) }
        self.balance = balance
        self.date = date
        self.adjust = adjust ?? false
    }

    private static func isDay(_ value: JSONValue) -> Bool {
        if case .string(let text) = value { CalendarDay(text) != nil } else { false }
    }
}

/// A statement balance the account's cleared balance does not match.
enum ReconcileError: ProblemConvertible {
    case unbalanced(clearedBalance: Money, balance: Money, date: String)

    var problem: Problem {
        switch self {
        case .unbalanced(let clearedBalance, let balance, let date):
            let difference = Money(cents: balance.cents - clearedBalance.cents)
            let detail =
                "the cleared balance on \(date) is \(clearedBalance), the statement says \(balance) (a difference of \(difference)); "
                + "nothing was reconciled. Find the missing transactions, or send adjust true"
            var problem = Problem(
                .conflict, detail: detail, errors: [.init(field: "balance", message: "does not match the cleared balance \(clearedBalance)")])
            // Money as every answer writes it: a JSON number with two decimals (docs/api.md, Money).
            problem.extensions = [("difference", difference.description), ("clearedBalance", clearedBalance.description)]
            return problem
        }
    }
}
