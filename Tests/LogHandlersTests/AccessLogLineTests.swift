import Foundation
@testable import LogHandlers
import Logging
import Testing

/// An access line written from an `AccessLogEntry` has the bytes of the same line logged through swift-log
/// with the entry's message and metadata, in both formats (docs/operations.md shows them).
@Suite struct AccessLogLineTests {
    static let durations: [Int64] = [
        0, 1, 9, 10, 41, 99, 100, 120, 412, 999, 1000, 1001, 1010, 1024, 1100, 1500, 12_345, 99_999, 100_000,
        123_456_789, 86_400_000_000, 999_999_999_999_999, 1_000_000_000_000_000, -5,
    ]

    static func entries() -> [AccessLogEntry] {
        durations.flatMap { micros in
            [
                AccessLogEntry(
                    requestID: "r-1", method: "GET", target: "/health", route: "/health", status: 200, bytes: 15,
                    microseconds: micros, client: "127.0.0.1"),
                AccessLogEntry(
                    requestID: "0a1b", method: "POST", target: "/items?q=\"a\\b\"\u{01}é", route: "unmatched", status: 404,
                    bytes: nil, microseconds: micros, client: nil),
            ]
        }
    }

    func event(for entry: AccessLogEntry) -> LogEvent {
        LogEvent(
            level: .info, message: "\(entry.message)", metadata: entry.metadata, source: "HTTPServer", file: #fileID,
            function: #function, line: #line)
    }

    @Test func theMessageNamesRequestStatusSizeAndMilliseconds() {
        var entry = AccessLogEntry(
            requestID: "r", method: "GET", target: "/categories/7?x=1", route: "/categories/:id", status: 200, bytes: 57,
            microseconds: 412, client: nil)
        #expect(entry.message == "GET /categories/7?x=1 200 57 0.412ms")
        entry.microseconds = 1_024_005
        entry.bytes = nil
        #expect(entry.message == "GET /categories/7?x=1 200 chunked 1024.005ms")
        #expect(entry.metadata["bytes"] == nil)
        #expect(entry.metadata["duration_ms"]?.description == "1024.005")
        #expect(entry.metadata.count == 5)
    }

    @Test func textLinesAreTheLinesOfTheSameEvent() {
        let timestamp = Array("2026-11-29T04:00:00Z".utf8)
        let sink = LogSink(descriptor: -1)
        var withMetadata = TextLogHandler(label: "budget-server", sink: sink)
        withMetadata.metadata = ["zone": "kept", "status": "the event's wins"]
        for handler in [TextLogHandler(label: "budget-server", sink: sink), withMetadata] {
            for entry in Self.entries() {
                let fast = handler.accessLine(for: entry, source: "HTTPServer", at: timestamp)
                let slow = handler.line(for: event(for: entry), at: timestamp)
                #expect(String(decoding: fast, as: UTF8.self) == String(decoding: slow, as: UTF8.self))
            }
        }
    }

    @Test func jsonLinesAreTheLinesOfTheSameEvent() throws {
        let timestamp = "2026-11-29T04:00:00.123Z"
        var withMetadata = JSONLogHandler(label: "budget-server") { _ in }
        withMetadata.metadata = ["zone": "kept", "message": "renamed"]
        for handler in [JSONLogHandler(label: "budget-server") { _ in }, withMetadata] {
            for entry in Self.entries() {
                let fast = handler.accessLine(for: entry, source: "HTTPServer", at: timestamp)
                let slow = handler.line(for: event(for: entry), at: timestamp)
                #expect(String(decoding: fast, as: UTF8.self) == String(decoding: slow, as: UTF8.self))
            }
        }
        // Still JSON, numbers as numbers.
        let line = JSONLogHandler(label: "l") { _ in }.accessLine(for: Self.entries()[16], source: "HTTPServer", at: timestamp)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        #expect(object["duration_ms"] as? Double == 0.412)
        #expect(object["status"] as? Int == 200)
    }
}
