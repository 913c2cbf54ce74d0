import BudgetCore
import HTTPServer

/// The ways a batch as a whole is refused (docs/sync.md, Batch push).
enum BatchError: ProblemConvertible {
    case tooManyOperations(Int, maximum: Int)
    /// An atomic batch stopped at this operation and rolled everything back.
    case operationFailed(index: Int, operation: BatchRequest.Operation, answer: Response)

    var problem: Problem {
        switch self {
        case .tooManyOperations(let count, let maximum):
            return Problem(.payloadTooLarge, detail: "a batch holds at most \(maximum) operations; this one has \(count); split it")
        case .operationFailed(let index, let operation, let answer):
            // The operation's own problem travels whole, so the client sees exactly why it failed. An answer
            // without a body (none of the routes gives one today) gets the bare problem of its status, so
            // `failure` is always a problem object, as openapi.yaml promises.
            let body = answer.body.isEmpty ? Problem(answer.status).response.body : answer.body
            let failure = String(decoding: body, as: UTF8.self)
            var problem = Problem(
                answer.status,
                detail: "operation \(index) (\(operation.summary)) failed with \(answer.status.code); "
                    + "the batch was rolled back and none of its operations was applied",
                type: "urn:budget-server:problem:batch-operation-failed")
            // Its headers too: a 412's ETag is what the client needs to retry.
            var headers = JSONObject()
            for header in answer.headers where header.name != "Content-Type" { headers[header.name] = .string(header.value) }
            problem.extensions = [("operation", String(index)), ("failure", failure), ("headers", JSONWriter.string(.object(headers)))]
            // A 503's advice holds for the batch as much as for its operation.
            if let retryAfter = answer.headers["Retry-After"] { problem.headers.add("Retry-After", retryAfter) }
            return problem
        }
    }
}
