import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP answer, reduced to what sync reads.
public struct HTTPAnswer: Sendable {
    public var status: Int
    /// Header names in lower case (RFC 9110 §5.1: names are case-insensitive).
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends one request and answers the server's reply; throws for a network error.
///
/// `URLSessionTransport` is the real one; tests wrap it to lose answers on purpose.
public protocol HTTPTransport: Sendable {
    func send(_ request: URLRequest) async throws -> HTTPAnswer
}

/// Requests through a `URLSession`; cancelling the calling task cancels the session's task at once.
public struct URLSessionTransport: HTTPTransport {
    public let session: URLSession

    /// A session with no cache: sync reads must always reach the server.
    public init(session: URLSession? = nil) {
        if let session {
            self.session = session
        } else {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.urlCache = nil
            self.session = URLSession(configuration: configuration)
        }
    }

    public func send(_ request: URLRequest) async throws -> HTTPAnswer {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPAnswer, Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: (error as? URLError)?.code == .cancelled ? CancellationError() : error)
                    } else if let response = response as? HTTPURLResponse {
                        var headers: [String: String] = [:]
                        for (name, value) in response.allHeaderFields {
                            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                        }
                        continuation.resume(returning: HTTPAnswer(status: response.statusCode, headers: headers, body: data ?? Data()))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                box.start(task)
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// Hands the session's task to the cancellation handler, which may run before the task exists.
///
/// `@unchecked Sendable`: both stored properties are read and written only under `lock`.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var isCancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = isCancelled
        lock.unlock()
        if cancelled { task.cancel() }
        task.resume()
    }

    func cancel() {
        lock.lock()
        isCancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
