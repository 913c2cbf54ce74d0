import BudgetCore
import HTTPServer

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
// status with a problem naming it. Not atomic: each operation commits or fails on its own, and the batch
// answers 200 with every operation's result.

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

    func respond(to request: Request, database: Database) async throws -> Response {
        let batch = try BatchRequest(request, maximumOperations: maximumOperations)
        let results: [Response]
        if batch.isAtomic {
            results = try await database.withinTransaction(commitIf: { $0.allSatisfy(\.status.isSuccess) }) { transaction in
                try await performAtomically(batch.operations, of: request, database: transaction)
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
    /// first one, and their answers stored in one statement with the COMMIT (`BatchKeys`).
    private func performAtomically(_ operations: [BatchRequest.Operation], of parent: Request, database: Database) async throws -> [Response] {
        var prepared: [Prepared] = []
        var keyed: [Int: BatchKeys.Keyed] = [:]
        for (index, operation) in operations.enumerated() {
            let ready = prepare(operation, index: index, of: parent, database: database)
            prepared.append(ready)
            // A refusal ends the batch: the operations after it never run, so their keys are not claimed.
            guard case .ready(let request, _) = ready else { break }
            if let key = operation.idempotencyKey {
                keyed[index] = BatchKeys.Keyed(index: index, key: key, fingerprint: RequestFingerprint(request))
            }
        }
        var keys = try await idempotency.claim(keyed.values.sorted { $0.index < $1.index }, in: database)
        var results: [Response] = []
        for (index, operation) in prepared.enumerated() {
            let answer: Response
            switch operation {
            case .refused(let refusal):
                answer = refusal
            case .ready(let request, let endpoint):
                let execute = { try await Self.answer(request, endpoint: endpoint, database: database) }
                if let keyed = keyed[index] { answer = try await keys.answer(keyed, execute: execute) } else { answer = try await execute() }
            }
            results.append(answer)
            if !answer.status.isSuccess { return results }
        }
        keys.storeAnswers(in: database)
        return results
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
        guard let key = operation.idempotencyKey else { return try await answer(database) }
        do {
            return try await idempotency.run(
                key: key, fingerprint: RequestFingerprint(request), database: database, execute: answer)
        } catch let error as IdempotencyError {
            return error.problem.response
        }
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
