import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How long to wait before sending a request again after a `503` or a network error.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included; after the last the call throws `SyncError.unavailable`.
    public var maxAttempts = 8
    /// The first wait when the server gave no `Retry-After`; each further wait doubles, up to `maxDelay`.
    public var baseDelay: Duration = .milliseconds(250)
    public var maxDelay: Duration = .seconds(30)

    public init(maxAttempts: Int = 8, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(30)) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    func delay(attempt: Int, retryAfter: String?) -> Duration {
        // RFC 9110 §10.2.3: Retry-After in seconds (the server sends seconds; an HTTP date falls back).
        if let retryAfter, let seconds = Int(retryAfter.trimmingCharacters(in: .whitespaces)), seconds >= 0 {
            return min(.seconds(seconds), maxDelay)
        }
        return min(baseDelay * (1 << min(attempt - 1, 20)), maxDelay)
    }
}

extension SyncClient {
    /// Sends a request, and on `503`, on `409` with `Retry-After` (the same idempotency key still running
    /// elsewhere, docs/sync.md) or on a network error waits and sends exactly the same request again.
    func sendRetrying(_ method: String, _ path: String, body: Data?, timeout: TimeInterval = 60) async throws -> HTTPAnswer {
        // Appended, not resolved (RFC 3986 §5.2 would drop a base path such as https://host/api).
        var base = configuration.baseURL.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + path) else {
            throw SyncError.malformedAnswer("bad path \(path)")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in configuration.headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        var attempt = 1
        while true {
            let last: String
            let retryAfter: String?
            do {
                let answer = try await transport.send(request)
                let isBusy = answer.status == 503 || (answer.status == 409 && answer.headers["retry-after"] != nil)
                if !isBusy { return answer }
                last = "status \(answer.status)"
                retryAfter = answer.headers["retry-after"]
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try Task.checkCancellation()
                last = String(describing: error)
                retryAfter = nil
            }
            guard attempt < configuration.retry.maxAttempts else { throw SyncError.unavailable(attempts: attempt, last: last) }
            let delay = configuration.retry.delay(attempt: attempt, retryAfter: retryAfter)
            eventSink.yield(.retrying(attempt: attempt, delay: delay))
            try await Task.sleep(for: delay)
            attempt += 1
        }
    }
}
