import BudgetCore
import HTTPServer
import Postgres

// How a batch runs (docs/sync.md)
//
// Each operation becomes the request the client would have sent on its own; the batch routes it with the
// same route table and runs that route's endpoint (validators, preconditions and all) on the batch's
// database session, so it is validated, routed and answered exactly as alone; nothing here knows a
// resource. An operation's idempotency key is honoured as the header would be.
//
// Atomic: every operation runs in one REPEATABLE READ transaction (Database.withinTransaction), its keys
// claimed together before the first and stored together with the COMMIT (BatchKeys), and the first answer
// that is not a success rolls all of them back; the batch then answers that operation's
// status with a problem naming it. A run of consecutive creates on one route is written by one INSERT
// (CombinableCreate); when that INSERT fails, the whole batch runs again with every operation on its own.
// Not atomic: each operation commits or fails on its own, and the batch answers 200 with every operation's
// result.
//
// An operation's answer is stored under its key as its route gave it, like a single request's, and its
// `Location` and `Content-Location` gain the prefix of the operation's own path on its way into the batch's
// answer, as the request pipeline adds it to a single request's: fresh or replayed, an operation answers what
// the same request sent alone would (docs/api.md, Ledgers).

/// `POST /batch`: an offline client's queued writes in one request.
struct BatchRoute: Sendable {
    static let path = "/batch"
    /// The most operations one batch may hold (413 beyond); the body limit (1 MiB) bounds it too.
    static let defaultMaximumOperations = 100

    /// The routes an operation may take: every route but this one.
    let routes: Router<Database>
    let idempotency: Idempotency
    let maximumOperations: Int
    /// The prefix operation paths may carry (`/ledgers/{L}/…`): only the batch's own ledger's, else 404.
    let scope: PathScope?
    /// The create routes whose runs of creates an atomic batch writes in one INSERT, by route.
    let combinableCreates: [RouteSignature: CombinableCreate]
    /// What every route's answer passes through on its way out (App.makeService), for the answers of combined
    /// creates, which do not pass through their route: the ETag.
    let tags: EntityTagMiddleware

    func respond(to request: Request, database: Database) async throws -> Response {
        let batch = try BatchRequest(request, maximumOperations: maximumOperations)
        let results: [Response]
        if batch.isAtomic {
            let atomically = { (combining: Bool) in
                try await database.withinTransaction(commitIf: { $0.allSatisfy(\.status.isSuccess) }) { transaction in
                    try await performAtomically(batch.operations, of: request, database: transaction, combining: combining)
                }
            }
            do {
                results = try await atomically(true)
            } catch is CombinedCreatesFailed {
                // Nothing of the first attempt was committed. Each operation through its own route answers as it
                // would alone, the one that failed included.
                results = try await atomically(false)
            }
            if let failed = results.last, !failed.status.isSuccess {
                let index = results.count - 1
                throw BatchError.operationFailed(index: index, operation: batch.operations[index], answer: failed)
            }
        } else {
            var answers: [Response] = []
            for (index, operation) in batch.operations.enumerated() {
                answers.append(
                    try await database.withinTransaction(commitIf: { $0.status.isSuccess }) { transaction in
                        try await perform(operation, index: index, of: request, database: transaction)
                    })
            }
            results = answers
        }
        return .json(BatchResponse.body(isAtomic: batch.isAtomic, results: results))
    }

    /// An operation ready to run (its request scoped and routed), or the refusal it answers instead.
    private enum Prepared {
        case ready(Request, Endpoint<Database>)
        case refused(Response)
    }

    private func prepare(_ operation: BatchRequest.Operation, index: Int, of parent: Request, database: Database) -> Prepared {
        var request = operation.request(parent: parent, index: index)
        if let scope, scope.apply(to: &request) {
            let named = request.parameters[scope.parameter]
            let defaultLedger = database.caller.holder?.unscopedLedger ?? .first
            guard named == database.ledger.description || (named == "default" && defaultLedger == database.ledger) else {
                return .refused(Access.noSuchLedger.response)
            }
        }
        let endpoint = routes.resolve(&request)
        if let refusal = Access.batchRefusal(request, database: database) { return .refused(refusal.response) }
        return .ready(request, endpoint)
    }

    /// The answers of an atomic batch's operations, in order, up to the first that is not a success, in the
    /// batch's transaction. The keys of the operations that can run are claimed in one statement before the
    /// first one, and their answers stored in one statement with the COMMIT (`BatchKeys`). `combining`: runs
    /// of creates are written one INSERT a run (`combinedRun`).
    private func performAtomically(
        _ operations: [BatchRequest.Operation], of parent: Request, database: Database, combining: Bool
    ) async throws -> [Response] {
        var prepared: [Prepared] = []
        var keyed: [Int: BatchKeys.Keyed] = [:]
        for (index, operation) in operations.enumerated() {
            let ready = prepare(operation, index: index, of: parent, database: database)
            prepared.append(ready)
            // A refusal ends the batch: the operations after it never run, so their keys are not claimed.
            guard case .ready(let request, _) = ready else { break }
            if let key = operation.idempotencyKey {
                keyed[index] = BatchKeys.Keyed(index: index, key: key, fingerprint: RequestFingerprint(request), request: request)
            }
        }
        var keys = try await idempotency.claim(keyed.values.sorted { $0.index < $1.index }, in: database)
        var results: [Response] = []
        var index = 0
        while index < prepared.count {
            if combining, let run = combinedRun(of: prepared, from: index, keyed: keyed, keys: keys, database: database) {
                let answers = try await write(run, database: database)
                for (member, answer) in zip(run.members, answers) {
                    if let keyed = keyed[member.index] { keys.remember(answer, for: keyed) }
                    results.append(Self.prefixed(answer, of: member.request))
                }
                index += answers.count
                continue
            }
            let answer: Response
            switch prepared[index] {
            case .refused(let refusal):
                answer = refusal
            case .ready(let request, let endpoint):
                let execute = { try await Self.answer(request, endpoint: endpoint, database: database) }
                let unprefixed: Response
                if let keyed = keyed[index] {
                    unprefixed = try await keys.answer(keyed, database: database, execute: execute)
                } else {
                    unprefixed = try await execute()
                }
                answer = Self.prefixed(unprefixed, of: request)
            }
            results.append(answer)
            if !answer.status.isSuccess { return results }
            index += 1
        }
        keys.storeAnswers(in: database)
        return results
    }

    /// The most operations one INSERT writes: a statement takes at most 65,535 parameters (the protocol's count
    /// is 16 bits), a transaction's row about a dozen, and a batch may hold 10,000 operations.
    static let maximumRunLength = 1_000

    /// Consecutive operations that one INSERT writes (`CombinableCreate`).
    private struct CombinedRun {
        let create: CombinableCreate
        var members: [(index: Int, request: Request)] = []
        var rows: [Query] = []
    }

    /// The run of creates starting at operation `start`, when there are at least two: operations on the same
    /// create route that give a row, each of which runs rather than answering what its key holds (and whose
    /// key no other member of the run has), up to a record without an id after one with an id
    /// (`CombinableCreate.Row.choosesID`).
    private func combinedRun(
        of prepared: [Prepared], from start: Int, keyed: [Int: BatchKeys.Keyed], keys: BatchKeys, database: Database
    ) -> CombinedRun? {
        guard case .ready(let first, _) = prepared[start], let route = first.route,
            let create = combinableCreates[RouteSignature(first.method, route)]
        else { return nil }
        var run = CombinedRun(create: create)
        var runKeys: Set<IdempotencyKey> = []
        var chosenID = false
        for index in start..<min(prepared.count, start + Self.maximumRunLength) {
            guard case .ready(let request, _) = prepared[index], request.method == first.method, request.route == route else { break }
            if let keyed = keyed[index] {
                guard keys.runs(keyed), runKeys.insert(keyed.key).inserted else { break }
            }
            guard let row = create.row(request, database), row.choosesID || !chosenID else { break }
            chosenID = chosenID || row.choosesID
            run.members.append((index, request))
            run.rows.append(row.values)
        }
        return run.members.count > 1 ? run : nil
    }

    /// The answers of a run's operations, each as its route would have given it, from one INSERT of their rows.
    /// The server's refusal of that INSERT is `CombinedCreatesFailed`, but a lost race, which the transaction
    /// retries as it is.
    private func write(_ run: CombinedRun, database: Database) async throws -> [Response] {
        let result: QueryResult
        do {
            result = try await database.query(run.create.insert(run.rows))
        } catch let error as PostgresError where error.kind == .server && !error.isConcurrentWrite {
            throw CombinedCreatesFailed()
        }
        let answers = try run.create.answers(result)
        guard answers.count == run.members.count else {
            throw PostgresError(kind: .decoding, message: "an INSERT of \(run.members.count) rows answered \(answers.count)")
        }
        var tagged: [Response] = []
        for (member, answer) in zip(run.members, answers) {
            tagged.append(try await tags.respond(to: member.request) { _ in answer })
        }
        return tagged
    }

    /// One operation's answer in a batch that is not atomic (in a transaction of its own); a refusal becomes
    /// its problem answer instead of ending the batch.
    private func perform(
        _ operation: BatchRequest.Operation, index: Int, of parent: Request, database: Database
    ) async throws -> Response {
        let request: Request
        let endpoint: Endpoint<Database>
        switch prepare(operation, index: index, of: parent, database: database) {
        case .refused(let refusal): return refusal
        case .ready(let ready, let resolved): (request, endpoint) = (ready, resolved)
        }
        let answer = { (database: Database) in try await Self.answer(request, endpoint: endpoint, database: database) }
        guard let key = operation.idempotencyKey else { return Self.prefixed(try await answer(database), of: request) }
        do {
            let stored = try await idempotency.run(
                request, key: key, fingerprint: RequestFingerprint(request), database: database, execute: answer)
            return Self.prefixed(stored, of: request)
        } catch let error as IdempotencyError {
            return error.problem.response
        }
    }

    /// `answer` with the prefix of `request`'s path (`/ledgers/{L}`) in its `Location` and `Content-Location`,
    /// as the request pipeline gives a single request's answer; added after the answer was stored under its key,
    /// so a replay gets it exactly like a fresh answer.
    private static func prefixed(_ answer: Response, of request: Request) -> Response {
        var answer = answer
        answer.keepPrefix(of: request)
        return answer
    }

    /// The endpoint's answer to one operation, with refusals as their problem answers.
    ///
    /// A lost race (`concurrentWrite`) is not the operation's fault: it must reach the transaction, which runs
    /// the whole batch again. Anything that is not a problem is a bug and fails the batch with a 500.
    private static func answer(_ request: Request, endpoint: Endpoint<Database>, database: Database) async throws -> Response {
        do {
            return try await endpoint.respond(to: request, context: database)
        } catch {
            switch APIError.translating(error) {
            case APIError.concurrentWrite: throw APIError.concurrentWrite
            case let refusal as any ProblemConvertible: return refusal.problem.response
            default: throw error
            }
        }
    }
}

/// A combined INSERT failed; the batch runs again, each operation on its own (`CombinableCreate`).
private struct CombinedCreatesFailed: Error {}

/// `{"atomic":…,"results":[{"status":201,"headers":{"Location":…},"body":{…}},…]}`: each answer's JSON passed through.
enum BatchResponse {
    static func body(isAtomic: Bool, results: [Response]) -> [UInt8] {
        var bytes = Array(#"{"atomic":\#(isAtomic),"results":["#.utf8)
        for (index, result) in results.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += Array(#"{"status":\#(result.status.code),"headers":"#.utf8)
            var headers = result.headers
            headers.remove("Content-Type")
            var members = JSONObject()
            for header in headers { members[header.name] = .string(header.value) }
            bytes += JSONWriter.bytes(.object(members))
            bytes += Array(#","body":"#.utf8)
            bytes += result.body.isEmpty ? Array("null".utf8) : result.body
            bytes.append(UInt8(ascii: "}"))
        }
        bytes += Array("]}".utf8)
        return bytes
    }
}
