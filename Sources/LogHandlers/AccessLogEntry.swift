import JSONText
import Logging

/// One answered HTTP request as the access log reports it, for handlers that write its line straight
/// from these fields (`AccessLogHandler`) rather than from a metadata dictionary.
///
/// An access-log line per request built its fields as a `Logger.Metadata` dictionary that the handler
/// then merged, sorted and described as Strings: about a tenth of a `/health` request's instructions
/// (bench/README.md "bench/health"). The line is the same either way: the message
/// `GET /categories/7 200 57 0.412ms` (`chunked` in place of the size of a streamed answer) and the fields
/// `bytes` (absent when streamed), `client` (when known), `duration_ms`, `method`, `request-id`, `route`
/// and `status`, in that order, which is their keys' sorted order.
public struct AccessLogEntry: Sendable {
    public var requestID: String
    public var method: String
    /// The request target as the client sent it, query included.
    public var target: String
    /// The route template, or a label for a request no route took.
    public var route: String
    public var status: Int
    /// The body's size; nil for a streamed answer, whose size is not known when it is logged.
    public var bytes: Int?
    public var microseconds: Int64
    /// The client's address, when known.
    public var client: String?

    public init(
        requestID: String, method: String, target: String, route: String, status: Int, bytes: Int?, microseconds: Int64,
        client: String?
    ) {
        self.requestID = requestID
        self.method = method
        self.target = target
        self.route = route
        self.status = status
        self.bytes = bytes
        self.microseconds = microseconds
        self.client = client
    }

    /// `GET /categories/7 200 57 0.412ms`, or `chunked` in place of the size.
    public var message: String {
        var text: [UInt8] = []
        appendMessage(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The entry as swift-log hands a handler a line logged at `.info` from `source`: what a handler with
    /// metadata of its own writes instead, merging that as for any line.
    func event(source: String) -> LogEvent {
        LogEvent(level: .info, message: "\(message)", metadata: metadata, source: source, file: #fileID, function: #function, line: #line)
    }

    /// The fields as swift-log metadata, for any other handler; `duration_ms` a `Double`, as a JSON number.
    public var metadata: Logger.Metadata {
        // Room for all seven fields at once: a literal of six grew (rehashing every key) when `client` came.
        var metadata = Logger.Metadata(minimumCapacity: 7)
        metadata["request-id"] = .string(requestID)
        metadata["method"] = .string(method)
        metadata["route"] = .string(route)
        metadata["status"] = .stringConvertible(status)
        if let bytes { metadata["bytes"] = .stringConvertible(bytes) }
        metadata["duration_ms"] = .stringConvertible(Double(microseconds) / 1000)
        if let client { metadata["client"] = .string(client) }
        return metadata
    }

    func appendMessage(to line: inout [UInt8]) {
        line.appendUTF8(method)
        line.append(UInt8(ascii: " "))
        line.appendUTF8(target)
        line.append(UInt8(ascii: " "))
        line.appendDecimal(status)
        if let bytes {
            line.append(UInt8(ascii: " "))
            line.appendDecimal(bytes)
            line.append(UInt8(ascii: " "))
        } else {
            line.appendLiteral(" chunked ")
        }
        Self.appendMilliseconds(microseconds, to: &line)
        line.appendLiteral("ms")
    }

    /// Microseconds as milliseconds with three decimals, e.g. `1.024`.
    static func appendMilliseconds(_ micros: Int64, to line: inout [UInt8]) {
        guard micros >= 0 else {
            let fraction = String(micros % 1000)
            line.appendUTF8("\(micros / 1000)." + String(repeating: "0", count: max(0, 3 - fraction.count)) + fraction)
            return
        }
        line.appendDecimal(Int(micros / 1000))
        line.append(UInt8(ascii: "."))
        let fraction = Int(micros % 1000)
        line.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        line.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    }

    /// `duration_ms` as `(Double(microseconds) / 1000).description` writes it (`0.412`, `1.0`, `12.5`),
    /// without the floating-point formatting: below 10¹⁵ µs the quotient's shortest decimal is the exact
    /// one, since a correctly rounded quotient of at most 15 significant digits reads back as itself.
    func appendDurationValue(to line: inout [UInt8]) {
        guard microseconds >= 0, microseconds < 1_000_000_000_000_000 else {
            line.appendUTF8((Double(microseconds) / 1000).description)
            return
        }
        line.appendDecimal(Int(microseconds / 1000))
        line.append(UInt8(ascii: "."))
        var fraction = Int(microseconds % 1000)
        guard fraction != 0 else { return line.append(UInt8(ascii: "0")) }
        var width = 3
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        var divisor = width == 3 ? 100 : width == 2 ? 10 : 1
        while divisor > 0 {
            line.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
    }
}

/// A log handler that writes an access-log line from its fields (`AccessLogEntry`), as it would write
/// the same line logged at `.info` with the entry's `message` and `metadata`.
public protocol AccessLogHandler: LogHandler {
    /// Writes `entry`'s line at `.info` from `source`; the caller has checked the level.
    func logAccess(_ entry: AccessLogEntry, source: String)
}

extension [UInt8] {
    /// Appends `text`'s UTF-8 with one copy: `+= text.utf8` goes through the generic sequence path.
    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    /// Appends a literal's bytes with one copy, where `+= "…".utf8` went through the generic sequence path.
    mutating func appendLiteral(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    /// Appends `value` in decimal, as `String(value)` writes it, without making that String.
    mutating func appendDecimal(_ value: Int) {
        guard value >= 0 else { return appendUTF8(String(value)) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            var rest = value
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}
