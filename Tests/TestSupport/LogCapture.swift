import Logging
import Synchronization

/// Every log event of a server under test, so a test can check what was logged, and what never was.
public final class LogCapture: Sendable {
    private let captured = Mutex<[LogEvent]>([])

    public init() {}

    /// A logger at `.trace` whose events are captured, each with the logger's own metadata merged in.
    public func logger(label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    public var events: [LogEvent] {
        captured.withLock { $0 }
    }

    /// Each event as one line: level, metadata as sorted `key=value` pairs, message, and its error if any.
    public var lines: [String] {
        events.map { event in
            let fields = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            let error = event.error.map { " error=\(String(reflecting: $0))" } ?? ""
            return "\(event.level) \(fields) \(event.message)\(error)"
        }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var event = event
            event.metadata = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.captured.withLock { $0.append(event) }
        }
    }
}
