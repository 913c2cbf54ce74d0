import BudgetCore
import HTTPServer

// How a batch runs (docs/sync.md)
//
// Each operation becomes the request the client would have sent on its own; the batch routes it with the
// same route table and runs that route's endpoint (validators, preconditions and all) on the batch's
// database session, so it is validated, routed and answered exactly as alone; nothing here knows a
// resource. An operation's idempotency key is honoured as the header would be.
//
// Atomic: every operation runs in one REPEATABLE READ transaction (Database.withinTransaction), and the
// first answer that is not a success rolls all of them back; the batch then answers that operation's
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
                var results: [Response] = []
                for (index, operation) in batch.operations.enumerated() {
                    let answer = try await perform(operation, index: index, of: request, database: transaction)
                    results.append(answer)
                    if !answer.status.isSuccess { break }
                }
                return results
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

    /// One operation's answer; a refusal becomes its problem answer instead of ending the batch.
    private func perform(
        _ operation: BatchRequest.Operation, index: Int, of parent: Request, database: Database
    ) async throws -> Response {
        var request = operation.request(parent: parent, index: index)
        if let scope, scope.apply(to: &request) {
            let named = request.parameters[scope.parameter]
            let defaultLedger = database.caller.holder?.unscopedLedger ?? .first
            guard named == database.ledger.description || (named == "default" && defaultLedger == database.ledger) else {
                return Access.noSuchLedger.response
            }
        }
        let endpoint = routes.resolve(&request)
        if let refusal = Access.batchRefusal(request, database: database) { return refusal.response }
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
