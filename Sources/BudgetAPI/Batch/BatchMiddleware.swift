import HTTPServer

// How a batch runs (SPEC §5)
//
// Each operation becomes the request the client would have sent on its own and goes through the rest of
// the middleware chain and the router, so it is validated, routed and answered exactly as alone; nothing
// here knows a resource. An operation's idempotency key is honoured as the header would be.
//
// Atomic: every operation runs in one REPEATABLE READ transaction (Database.withinTransaction), and the
// first answer that is not a success rolls all of them back; the batch then answers that operation's
// status with a problem naming it. Not atomic: each operation commits or fails on its own, and the batch
// answers 200 with every operation's result.
//
// Being a middleware rather than a route is what lets it call the chain below it; `/batch` is therefore
// not a name a generic collection can have.

/// `POST /batch`: an offline client's queued writes in one request.
struct BatchMiddleware: Middleware {
    static let path = "/batch"
    /// The most operations one batch may hold (413 beyond); the body limit (1 MiB) bounds it too.
    static let defaultMaximumOperations = 100

    let database: Database
    let idempotency: Idempotency
    let maximumOperations: Int

    func respond(to request: Request, next: any Handler) async throws -> Response {
        guard request.path == Self.path else { return try await next.respond(to: request) }
        guard request.method == .post else {
            throw Problem(.methodNotAllowed, detail: "\(Self.path) takes POST only", headers: ["Allow": "POST"])
        }
        let batch = try BatchRequest(request, maximumOperations: maximumOperations)
        let results: [Response]
        if batch.isAtomic {
            results = try await database.withinTransaction(commitIf: { $0.allSatisfy(\.status.isSuccess) }) {
                var results: [Response] = []
                for (index, operation) in batch.operations.enumerated() {
                    let answer = try await perform(operation, index: index, of: request, next: next)
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
                answers.append(try await database.withinTransaction(commitIf: { $0.status.isSuccess }) {
                    try await perform(operation, index: index, of: request, next: next)
                })
            }
            results = answers
        }
        return .json(BatchResponse.body(isAtomic: batch.isAtomic, results: results))
    }

    /// One operation's answer; a refusal becomes its problem answer instead of ending the batch.
    private func perform(
        _ operation: BatchRequest.Operation, index: Int, of parent: Request, next: any Handler
    ) async throws -> Response {
        let request = operation.request(parent: parent, index: index)
        let answer = { try await Self.answer(request, next: next) }
        guard let key = operation.idempotencyKey else { return try await answer() }
        do {
            return try await idempotency.run(key: key, fingerprint: RequestFingerprint(request), execute: answer)
        } catch let error as IdempotencyError {
            return error.problem.response
        }
    }

    /// The chain's answer to one operation, with refusals as their problem answers.
    ///
    /// A lost race (`concurrentWrite`) is not the operation's fault: it must reach the transaction, which runs
    /// the whole batch again. Anything that is not a problem is a bug and fails the batch with a 500.
    private static func answer(_ request: Request, next: any Handler) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch APIError.concurrentWrite {
            throw APIError.concurrentWrite
        } catch let error as any ProblemConvertible {
            return error.problem.response
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
