import Foundation
import LogHandlers
import Logging
import Synchronization
import Testing

/// `--log-format json`: one JSON object per line, every value escaped.
@Suite struct JSONLogHandlerTests {
    /// The lines a handler wrote.
    final class Lines: Sendable {
        let written = Mutex<[[UInt8]]>([])
    }

    func logged(
        _ message: Logger.Message, level: Logger.Level = .info, metadata: Logger.Metadata = [:],
        handlerMetadata: Logger.Metadata = [:], logLevel: Logger.Level = .info
    ) -> [[UInt8]] {
        let lines = Lines()
        var logger = Logger(label: "json \"test\"") { label in
            var handler = JSONLogHandler(label: label) { line in lines.written.withLock { $0.append(line) } }
            handler.metadata = handlerMetadata
            return handler
        }
        logger.logLevel = logLevel
        logger.log(level: level, message, metadata: metadata)
        return lines.written.withLock { $0 }
    }

    func object(_ line: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
    }

    @Test func oneObjectPerLineWithFixedFieldsThenMetadata() throws {
        let lines = logged(
            "GET /items/1 200 2 0.1ms",
            metadata: [
                "request-id": "abc-1", "method": "GET", "route": "/items/:id",
                "status": .stringConvertible(200), "bytes": .stringConvertible(2), "duration_ms": .stringConvertible(0.125),
            ])
        let line = try #require(lines.first)
        #expect(lines.count == 1)
        #expect(line.last == UInt8(ascii: "\n"))
        #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.hasPrefix(#"{"timestamp":""#))
        let fields = try object(line)
        #expect(fields["level"] as? String == "info")
        #expect(fields["label"] as? String == "json \"test\"")
        #expect(fields["source"] as? String == "LogHandlersTests")
        #expect(fields["message"] as? String == "GET /items/1 200 2 0.1ms")
        #expect(fields["request-id"] as? String == "abc-1")
        #expect(fields["route"] as? String == "/items/:id")
        // Numbers stay numbers, so a collector can sum and compare them.
        #expect(text.contains(#""status":200"#))
        #expect(text.contains(#""bytes":2"#))
        #expect(text.contains(#""duration_ms":0.125"#))
        let timestamp = try #require(fields["timestamp"] as? String)
        #expect(timestamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(timestamp)")
    }

    @Test func everyStringIsEscaped() throws {
        let nasty = "quote \" backslash \\ newline \n tab \t bell \u{07} é 😀"
        let lines = logged("\(nasty)", metadata: [nasty: .string(nasty), "list": [.string(nasty), .stringConvertible(Double.nan)]])
        let line = try #require(lines.first)
        #expect(line.dropLast().contains(UInt8(ascii: "\n")) == false)
        #expect(String(decoding: line, as: UTF8.self).contains(#"\u0007"#))
        let fields = try object(line)
        #expect(fields["message"] as? String == nasty)
        #expect(fields[nasty] as? String == nasty)
        #expect(fields["list"] as? [String] == [nasty, "nan"])
    }

    @Test func metadataMergesNestsAndNeverHidesFixedFields() throws {
        let lines = logged(
            "hello",
            metadata: [
                "message": "a metadata value named like a field", "shared": "event",
                "nested": ["ok": .stringConvertible(true), "count": .stringConvertible(3)],
            ], handlerMetadata: ["shared": "handler", "service": "budget"])
        let fields = try object(try #require(lines.first))
        #expect(fields["message"] as? String == "hello")
        #expect(fields["metadata_message"] as? String == "a metadata value named like a field")
        #expect(fields["shared"] as? String == "event")
        #expect(fields["service"] as? String == "budget")
        let nested = try #require(fields["nested"] as? [String: Any])
        #expect(nested["ok"] as? Bool == true)
        #expect(nested["count"] as? Int == 3)
    }

    @Test func levelsBelowTheHandlersAreDropped() {
        #expect(logged("quiet", level: .debug, logLevel: .info).isEmpty)
        #expect(logged("loud", level: .error, logLevel: .info).count == 1)
    }
}
