import Foundation

/// Why a pull or push stopped.
public enum SyncError: Error, Sendable, CustomStringConvertible {
    /// The server answered something that is not the protocol of docs/sync.md.
    case malformedAnswer(String)
    /// The server refused a request for good; retrying it unchanged cannot succeed.
    case rejected(status: Int, operation: Int?, problem: String)
    /// 503s or network errors went on past the retry policy's attempts.
    case unavailable(attempts: Int, last: String)
    /// A `refresh` kept being overtaken by feed pages; pull, then refresh again.
    case busy(String)

    public var description: String {
        switch self {
        case .malformedAnswer(let what): "the server's answer is not the sync protocol: \(what)"
        case .rejected(let status, let operation, let problem):
            "the server answered \(status)\(operation.map { " for operation \($0)" } ?? ""): \(problem)"
        case .unavailable(let attempts, let last): "the server stayed unavailable for \(attempts) attempts (last: \(last))"
        case .busy(let what): what
        }
    }
}
