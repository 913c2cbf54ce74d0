import HTTPServer

/// Slows answers down like a real network, for client test suites (`--delay MS`, `?_delay=MS`;
/// docs/json-server.md).
struct DelayGate: RequestGate {
    /// A request's own `_delay` may not hold a connection longer than this.
    static let maximum: Duration = .seconds(10)

    /// `--delay`; zero answers at once unless the request asks for `_delay`.
    let defaultDelay: Duration

    func check(_ request: Request) async throws {
        let delay = try requestedDelay(request) ?? defaultDelay
        if delay > .zero { try await Task.sleep(for: delay) }
    }

    private func requestedDelay(_ request: Request) throws -> Duration? {
        guard let text = request.queryValue("_delay") else { return nil }
        guard let milliseconds = Int(text), milliseconds >= 0, .milliseconds(milliseconds) <= Self.maximum else {
            throw APIError.malformedQuery("_delay must be a whole number of milliseconds from 0 to 10000")
        }
        return .milliseconds(milliseconds)
    }
}
