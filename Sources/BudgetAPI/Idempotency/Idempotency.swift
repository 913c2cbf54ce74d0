import BudgetCore
import HTTPServer
import Postgres

// How a key gives exactly-once writes (docs/sync.md)
//
// The key's row is stored by the same database transaction as the write it answers for, so the two
// commit together or not at all: a crash after the write cannot lose the key, and a crash before the
// commit leaves nothing behind for the retry to trip over. Inside that transaction:
//
// 1. One statement takes a transaction-scoped advisory lock on the key, without waiting, and reads the
//    key's live row. Lock taken by someone else: the first request is still running (on this or another
//    server process): 409. Row found: replay it, or 422 if the request differs.
// 2. Otherwise the request runs as it would without a key, on the session of this same transaction
//    (`Database.withinTransaction`), and a successful answer is stored before COMMIT. Failures are not
//    stored: nothing was written, so a retry should run again.
//
// The lock is released by COMMIT, after the row became visible, so the next claimant finds the row.
//
// Round trips: the claim is sent ahead of the request's first statement, in its round trip with the
// transaction's BEGIN (`Database.sendWithNext`), as a statement that fails when the key is busy or answered
// (`IdempotencyQueries.claimOrRefuse`), so that the server skips the request's statement after it: nothing
// runs for a duplicate or a retry, which then answers 409, or reads the stored answer in one more statement
// to replay it (or 422). The answer is stored in the round trip of the COMMIT (`Database.deferUntilCommit`),
// so a keyed write costs the round trips of the same write in a transaction of its own and no more: a keyed
// POST is two. An atomic batch claims all its keys in one statement before its first operation and stores
// all its answers in one statement with its COMMIT (`BatchKeys`).
//
// A create on a route that can write its row in one INSERT (`CombinableCreate`) takes one round trip instead:
// its statement writes the record and the key's row together, the row keeping the record's columns rather than
// the answer (`IdempotencyQueries.createAndStore`, migrations/0024), and a retry renders them again. When that
// statement fails, nothing of it was written: if the key already has a row, that row is read and replayed (or
// refused, 422, or, expired, the request runs the general way); if the route refuses the record, the request
// runs the general way above, which gives the route's own error.

/// Runs requests at most once per idempotency key, replaying the first answer to retries.
struct Idempotency: Sendable {
    static let replayedHeader = "Idempotent-Replayed"

    let purger = PeriodicPurge(statement: IdempotencyQueries.purgeExpired)
    /// The creates a keyed request writes in one statement, and how their kept rows are answered.
    let creates: KeyedCreates

    /// `execute`'s answer, run on the session of one transaction with the key's record, or the key's
    /// stored answer.
    func run(
        _ request: Request, key: IdempotencyKey, fingerprint: RequestFingerprint, database: Database,
        execute: (Database) async throws -> Response
    ) async throws -> Response {
        try await purger.purgeIfDue(in: database)
        switch try await createInOneStatement(request, key: key, fingerprint: fingerprint, database: database) {
        case .created(let response):
            return response
        case .keyTaken:
            return try await storedAnswer(request, key: key, fingerprint: fingerprint, database: database) {
                try await runInTransaction(request, key: key, fingerprint: fingerprint, database: database, execute: execute)
            }
        case .notWritten:
            return try await runInTransaction(request, key: key, fingerprint: fingerprint, database: database, execute: execute)
        }
    }

    /// `run`'s general way: the claim, the request and the stored answer in one transaction.
    private func runInTransaction(
        _ request: Request, key: IdempotencyKey, fingerprint: RequestFingerprint, database: Database,
        execute: (Database) async throws -> Response
    ) async throws -> Response {
        do {
            return try await database.withinTransaction(commitIf: { $0.status.isSuccess }) { transaction in
                let claim = transaction.sendWithNext(IdempotencyQueries.claimOrRefuse(key, in: transaction.ledger))
                let outcome: Result<Response, any Error>
                do { outcome = .success(try await execute(transaction)) } catch { outcome = .failure(error) }
                // The claim's refusal decides, whatever the request made of the statement skipped after it.
                _ = try await transaction.answer(to: claim)
                let response = try outcome.get()
                guard response.status.isSuccess else { return response }
                let answer = StoredAnswer(response)
                transaction.deferUntilCommit(
                    IdempotencyQueries.store(
                        key, fingerprint: fingerprint, status: answer.status, headers: answer.headersJSON, body: answer.body,
                        in: transaction.ledger))
                return response
            }
        } catch let refusal as PostgresError where refusal.sqlState == .idempotencyKeyBusy {
            throw IdempotencyError.inProgress(key)
        } catch let refusal as PostgresError where refusal.sqlState == .idempotencyKeyAnswered {
            return try await storedAnswer(request, key: key, fingerprint: fingerprint, database: database) {
                try await runInTransaction(request, key: key, fingerprint: fingerprint, database: database, execute: execute)
            }
        }
    }

    /// What became of a create written with its key in one statement (`createInOneStatement`).
    private enum OneStatementCreate {
        case created(Response)
        /// The key already has a row, live or expired: what it holds decides (`storedAnswer`).
        case keyTaken
        /// The request is no such create, or PostgreSQL refused the record: it runs the general way.
        case notWritten
    }

    /// A create written with its key in one statement (`IdempotencyQueries.createAndStore`). A refused statement
    /// wrote nothing.
    private func createInOneStatement(
        _ request: Request, key: IdempotencyKey, fingerprint: RequestFingerprint, database: Database
    ) async throws -> OneStatementCreate {
        // Inside a transaction (a batch's operation) a refused statement would abort the transaction itself.
        guard !database.isInTransaction, let create = creates.create(for: request), let row = create.row(request, database) else {
            return .notWritten
        }
        let statement = IdempotencyQueries.createAndStore(
            create.insert([row.values]), columns: create.columns, key: key, fingerprint: fingerprint, in: database.ledger)
        let result: QueryResult
        do {
            result = try await database.query(statement)
        } catch let refusal as PostgresError where refusal.kind == .server {
            return refusal.sqlState == .uniqueViolation && refusal.constraint == IdempotencyQueries.keyConstraint ? .keyTaken : .notWritten
        }
        return .created(try await creates.answer(request, create: create, result: result))
    }

    /// The answer stored under a key found answered: its replay, or 422 for another request. `runAnew` when
    /// the answer expired since, or 409 when the key is held again.
    private func storedAnswer(
        _ request: Request, key: IdempotencyKey, fingerprint: RequestFingerprint, database: Database,
        runAnew: () async throws -> Response
    ) async throws -> Response {
        let row = try await database.query(IdempotencyQueries.claim(key, fingerprint: fingerprint, in: database.ledger))[0]
        switch try StoredAnswer.Claim(row) {
        case .busy: throw IdempotencyError.inProgress(key)
        case .free: return try await runAnew()
        case .stored(let answer, let matches):
            guard matches else { throw IdempotencyError.reusedForAnotherRequest(key) }
            return try await replay(answer, of: request, key: key, database: database)
        }
    }

    /// A stored answer as a retry of `request` gets it, marked `Idempotent-Replayed: true`. A create written in
    /// one statement kept its row: the route renders it again, with the headers it gave the first time.
    func replay(_ answer: StoredAnswer, of request: Request, key: IdempotencyKey, database: Database) async throws -> Response {
        guard answer.isWrittenRow else { return try answer.replayed() }
        // The fingerprint matched, so this is the same method and path: the route that wrote the row.
        guard let create = creates.create(for: request) else {
            throw PostgresError(kind: .decoding, message: "key \(key.value) keeps a written row, but \(request.method) \(request.path) writes none")
        }
        let rows = try await database.query(IdempotencyQueries.writtenRow(key, columns: create.columns, in: database.ledger))
        var response = try await creates.answer(request, create: create, result: rows)
        response.headers.replaceOrAdd(Self.replayedHeader, "true")
        return response
    }

    /// Claims the keys of an atomic batch's operations in one statement, in `transaction` (the batch's).
    func claim(_ keyed: [BatchKeys.Keyed], in transaction: Database) async throws -> BatchKeys {
        guard !keyed.isEmpty else { return BatchKeys(claims: [:], idempotency: self) }
        try await purger.purgeIfDue(in: transaction)
        let rows = try await transaction.query(
            IdempotencyQueries.claimAll(keyed.map { ($0.key, $0.fingerprint) }, in: transaction.ledger))
        guard rows.count == keyed.count else {
            throw PostgresError(kind: .decoding, message: "claiming \(keyed.count) keys answered \(rows.count) rows")
        }
        var claims: [Int: StoredAnswer.Claim] = [:]
        for (index, operation) in keyed.enumerated() { claims[operation.index] = try StoredAnswer.Claim(rows[index]) }
        return BatchKeys(claims: claims, idempotency: self)
    }
}

/// The create routes a keyed request writes in one statement with its key (`Idempotency`), by route, and what
/// their answers pass through on the way out (App.makeService): the ETag, as for the route's own answers.
struct KeyedCreates: Sendable {
    let creates: [RouteSignature: CombinableCreate]
    let tags: EntityTagMiddleware

    /// The create of `request`'s route, if it has one.
    func create(for request: Request) -> CombinableCreate? {
        guard let route = request.route else { return nil }
        return creates[RouteSignature(request.method, route)]
    }

    /// The route's answer to the one row of `result`, as the route itself answers it.
    func answer(_ request: Request, create: CombinableCreate, result: QueryResult) async throws -> Response {
        let answers = try create.answers(result)
        guard answers.count == 1 else {
            throw PostgresError(kind: .decoding, message: "a keyed create answered \(answers.count) rows")
        }
        return try await tags.respond(to: request) { _ in answers[0] }
    }
}

/// The idempotency keys of one atomic batch (docs/sync.md), claimed together before its first operation
/// (`Idempotency.claim`) and stored together with its COMMIT (`storeAnswers`), where a request with a key
/// claims and stores its own: two statements for the whole batch instead of two per operation. Each
/// operation still answers as it would on its own, in order: a key busy elsewhere is that operation's 409,
/// a stored answer its replay (or 422 for another request), and a key used again later in the same batch
/// replays (or refuses) the answer this batch gave it, as the row stored by the first use would.
struct BatchKeys {
    /// A keyed operation: its index in the batch, its key and its request's fingerprint.
    struct Keyed {
        let index: Int
        let key: IdempotencyKey
        let fingerprint: RequestFingerprint
        /// The operation as a request of its own, for the replay of a row its key kept (`Idempotency.replay`).
        let request: Request
    }

    /// What claiming found, by operation index.
    fileprivate let claims: [Int: StoredAnswer.Claim]
    private let idempotency: Idempotency
    /// The answers this batch gave its keys, to store at its commit, in order, each key once.
    private var fresh: [(key: IdempotencyKey, fingerprint: RequestFingerprint, answer: StoredAnswer)] = []

    fileprivate init(claims: [Int: StoredAnswer.Claim], idempotency: Idempotency) {
        self.claims = claims
        self.idempotency = idempotency
    }

    /// Operation `keyed.index`'s answer: `execute`'s, or the key's stored or earlier answer, or its refusal.
    mutating func answer(_ keyed: Keyed, database: Database, execute: () async throws -> Response) async throws -> Response {
        guard let claim = claims[keyed.index] else { preconditionFailure("operation \(keyed.index)'s key was not claimed") }
        switch claim {
        case .busy:
            return IdempotencyError.inProgress(keyed.key).problem.response
        case .stored(let answer, let matches):
            guard matches else { return IdempotencyError.reusedForAnotherRequest(keyed.key).problem.response }
            return try await idempotency.replay(answer, of: keyed.request, key: keyed.key, database: database)
        case .free:
            if let earlier = fresh.first(where: { $0.key == keyed.key }) {
                guard earlier.fingerprint.canonicalText == keyed.fingerprint.canonicalText else {
                    return IdempotencyError.reusedForAnotherRequest(keyed.key).problem.response
                }
                return try earlier.answer.replayed()
            }
            let response = try await execute()
            remember(response, for: keyed)
            return response
        }
    }

    /// Whether operation `keyed.index` runs (its key is free and this batch has not used it yet), rather than
    /// answer what its key holds.
    func runs(_ keyed: Keyed) -> Bool {
        guard case .free? = claims[keyed.index] else { return false }
        return !fresh.contains { $0.key == keyed.key }
    }

    /// Keeps the answer of an operation that ran (`runs`), to store at the commit; a failure is not stored.
    mutating func remember(_ response: Response, for keyed: Keyed) {
        if response.status.isSuccess { fresh.append((keyed.key, keyed.fingerprint, StoredAnswer(response))) }
    }

    /// At most this many answers per statement storing them: each takes seven parameters, and a statement
    /// takes at most 65,535 (the protocol's count is 16 bits), where a batch may hold 10,000 operations.
    static let answersPerStatement = 1_000

    /// Queues the statement storing every answer this batch gave its keys (one per `answersPerStatement`), to
    /// run with the batch's COMMIT.
    func storeAnswers(in transaction: Database) {
        for start in stride(from: 0, to: fresh.count, by: Self.answersPerStatement) {
            let answers = Array(fresh[start..<min(start + Self.answersPerStatement, fresh.count)])
            transaction.deferUntilCommit(IdempotencyQueries.storeAll(answers, in: transaction.ledger))
        }
    }
}

/// An answer as the idempotency_keys table keeps it.
struct StoredAnswer {
    let status: Int
    /// `[[name, value], …]`
    let headersJSON: String
    let body: String
    /// Whether the key keeps a created row instead of the answer (`IdempotencyQueries.createAndStore`).
    var isWrittenRow = false

    /// What claiming a key found.
    enum Claim {
        /// Another transaction holds the key.
        case busy
        case free
        case stored(StoredAnswer, fingerprintMatches: Bool)

        init(_ row: Row) throws {
            guard try row.decode(Bool.self, at: 0) else { self = .busy; return }
            guard try row.decode(Bool.self, at: 1) else { self = .free; return }
            var answer = StoredAnswer(
                status: Int(try row.decode(Int16.self, at: 3)),
                headersJSON: try row.decode(String.self, at: 4),
                body: try row.decode(String.self, at: 5))
            answer.isWrittenRow = try row.decode(Bool.self, at: 6)
            self = .stored(answer, fingerprintMatches: try row.decode(Bool.self, at: 2))
        }
    }

    init(status: Int, headersJSON: String, body: String) {
        self.status = status
        self.headersJSON = headersJSON
        self.body = body
    }

    init(_ response: Response) {
        status = response.status.code
        let pairs = response.headers.map { JSONValue.array([.string($0.name), .string($0.value)]) }
        headersJSON = JSONWriter.string(.array(pairs))
        // Answers are JSON, so UTF-8; anything else would not survive a text column and is replaced visibly.
        body = String(decoding: response.body, as: UTF8.self)
    }

    /// The stored answer as a retry gets it: marked `Idempotent-Replayed: true`.
    func replayed() throws -> Response {
        var response = try response()
        response.headers.replaceOrAdd(Idempotency.replayedHeader, "true")
        return response
    }

    func response() throws -> Response {
        var headers = Headers()
        if case .array(let pairs) = try JSONParser.parse(Array(headersJSON.utf8)) {
            for case .array(let pair) in pairs {
                if pair.count == 2, case .string(let name) = pair[0], case .string(let value) = pair[1] {
                    headers.add(name, value)
                }
            }
        }
        return Response(status: Status(code: status), headers: headers, body: Array(body.utf8))
    }
}
