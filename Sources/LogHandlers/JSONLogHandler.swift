import Glibc
import JSONText
import Logging

/// Writes each log event as one JSON object on a line of its own (JSON Lines), for log collectors.
///
/// `{"timestamp":"2026-11-21T08:00:00.123Z","level":"info","label":"budget-server","source":"HTTPServer",
/// "message":"GET /categories/7 200 57 0.412ms","bytes":57,"duration_ms":0.412,"method":"GET",…}`
///
/// The fixed fields come first; the metadata (the handler's, its provider's, then the event's, later ones
/// winning) follows flat and sorted by key, so `jq .status` finds a field. A metadata key that is also a
/// fixed field's name is written as `metadata_<key>` rather than lost. Integers, finite floating-point
/// numbers and Booleans given as `.stringConvertible` become JSON numbers and Booleans; every other value
/// is a string, dictionaries and arrays nest.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable ([UInt8]) -> Void

    private static let fixedFields: Set<String> = ["timestamp", "level", "label", "source", "message", "error"]

    /// A handler that hands each line, newline included, to `write`.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable ([UInt8]) -> Void) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    /// A handler that writes to standard error through `LogSink.standardError`, each line whole.
    public static func standardError(label: String, metadataProvider: Logger.MetadataProvider? = nil) -> JSONLogHandler {
        JSONLogHandler(label: label, metadataProvider: metadataProvider) { line in
            LogSink.standardError.write(line)
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        write(line(for: event, at: Self.now()))
    }

    /// The line for `event`, stamped `timestamp`.
    func line(for event: LogEvent, at timestamp: String) -> [UInt8] {
        let merged = Logger.Metadata.merged(handler: metadata, provider: metadataProvider, event: event.metadata)

        var line: [UInt8] = []
        line.reserveCapacity(256)
        line += "{\"timestamp\":\"\(timestamp)\",\"level\":\"\(event.level.rawValue)\"".utf8
        line += ",\"label\":\(label.jsonQuoted),\"source\":\(event.source.jsonQuoted)".utf8
        line += ",\"message\":\(event.message.description.jsonQuoted)".utf8
        if let error = event.error {
            line += ",\"error\":\(String(describing: error).jsonQuoted)".utf8
        }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            let name = Self.fixedFields.contains(key) ? "metadata_" + key : key
            line += ",\(name.jsonQuoted):".utf8
            Self.append(value, to: &line)
        }
        line += "}\n".utf8
        return line
    }

    private static func append(_ value: Logger.Metadata.Value, to line: inout [UInt8]) {
        switch value {
        case .string(let text):
            line += text.jsonQuoted.utf8
        case .stringConvertible(let convertible):
            line += jsonLiteral(convertible).utf8
        case .dictionary(let dictionary):
            line.append(UInt8(ascii: "{"))
            for (index, (key, nested)) in dictionary.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                line += "\(key.jsonQuoted):".utf8
                append(nested, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        case .array(let values):
            line.append(UInt8(ascii: "["))
            for (index, nested) in values.enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                append(nested, to: &line)
            }
            line.append(UInt8(ascii: "]"))
        }
    }

    /// Numbers and Booleans as JSON literals; anything else, NaN and infinities included, as a string.
    private static func jsonLiteral(_ value: any CustomStringConvertible) -> String {
        switch value {
        case let integer as any BinaryInteger: integer.description
        case let number as Double where number.isFinite: number.description
        case let number as Float where number.isFinite: number.description
        case let flag as Bool: flag ? "true" : "false"
        default: value.description.jsonQuoted
        }
    }

    /// Now in UTC, RFC 3339 with milliseconds: `2026-11-21T08:00:00.123Z`.
    static func now() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var seconds = time.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(Int(parts.tm_year) + 1900, 4) + "-" + padded(Int(parts.tm_mon) + 1, 2) + "-" + padded(Int(parts.tm_mday), 2)
            + "T" + padded(Int(parts.tm_hour), 2) + ":" + padded(Int(parts.tm_min), 2) + ":" + padded(Int(parts.tm_sec), 2)
            + "." + padded(time.tv_nsec / 1_000_000, 3) + "Z"
    }
}

extension Logger.Metadata {
    /// A handler's metadata, then its provider's, then the event's, later ones winning; without copying
    /// when only one of them has any (the access log's case: only the event's).
    static func merged(handler: Logger.Metadata, provider: Logger.MetadataProvider?, event: Logger.Metadata?) -> Logger.Metadata {
        let provided = provider?.get() ?? [:]
        if handler.isEmpty && provided.isEmpty { return event ?? [:] }
        var merged = handler
        merged.merge(provided) { $1 }
        if let event { merged.merge(event) { $1 } }
        return merged
    }
}

extension JSONLogHandler: AccessLogHandler {
    public func logAccess(_ entry: AccessLogEntry, source: String) {
        write(accessLine(for: entry, source: source, at: Self.now()))
    }

    /// The line `line(for:at:)` writes for `entry`'s message and metadata logged at `.info` from `source`,
    /// written from the entry's fields when nothing is merged into them (the server's case).
    func accessLine(for entry: AccessLogEntry, source: String, at timestamp: String) -> [UInt8] {
        guard metadata.isEmpty, metadataProvider == nil else { return line(for: entry.event(source: source), at: timestamp) }
        var line: [UInt8] = []
        line.reserveCapacity(320)
        line.appendLiteral("{\"timestamp\":\"")
        line.appendUTF8(timestamp)
        line.appendLiteral("\",\"level\":\"info\",\"label\":")
        JSONQuoting.append(label, to: &line)
        line.appendLiteral(",\"source\":")
        JSONQuoting.append(source, to: &line)
        line.appendLiteral(",\"message\":")
        var message: [UInt8] = []
        message.reserveCapacity(64)
        entry.appendMessage(to: &message)
        message.withUnsafeBytes { JSONQuoting.append(utf8: $0, to: &line) }
        // The keys in sorted order, none of them a fixed field's name; numbers as JSON numbers.
        if let bytes = entry.bytes {
            line.appendLiteral(",\"bytes\":")
            line.appendDecimal(bytes)
        }
        if let client = entry.client {
            line.appendLiteral(",\"client\":")
            JSONQuoting.append(client, to: &line)
        }
        line.appendLiteral(",\"duration_ms\":")
        entry.appendDurationValue(to: &line)
        line.appendLiteral(",\"method\":")
        JSONQuoting.append(entry.method, to: &line)
        line.appendLiteral(",\"request-id\":")
        JSONQuoting.append(entry.requestID, to: &line)
        line.appendLiteral(",\"route\":")
        JSONQuoting.append(entry.route, to: &line)
        line.appendLiteral(",\"status\":")
        line.appendDecimal(entry.status)
        line.appendLiteral("}\n")
        return line
    }
}
