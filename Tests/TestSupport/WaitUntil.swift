/// The condition a test waited for did not hold in time.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// Polls `condition` until it holds, and fails after `timeout` rather than looping forever.
///
/// On a loaded 2-core machine a state a test polls for can come and go between two looks, or never come;
/// a bounded wait turns that into a failure with a message instead of a hung test run.
public func waitUntil(
    _ what: String,
    timeout: Duration = .seconds(20),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(description: "timed out waiting until \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// A request the test needed to succeed answered something else; the message holds the answer, so the test
/// ends with it instead of reading it as an empty result and asking again.
public struct UnexpectedAnswer: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}
