import Foundation
import LogHandlers
import Logging
import TestSupport
import Testing

@Suite("LogSink and TextLogHandler")
struct LogSinkTests {
    /// A pipe whose read end the test drains; the sink writes to its write end.
    private final class Pipe: @unchecked Sendable {
        let read: Int32
        let write: Int32
        init() {
            var ends: [Int32] = [0, 0]
            precondition(pipe(&ends) == 0)
            (read, write) = (ends[0], ends[1])
            _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
        }
        deinit { Glibc.close(read); Glibc.close(write) }

        func drain() -> [UInt8] {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = Glibc.read(read, &buffer, buffer.count)
                guard count > 0 else { return bytes }
                bytes += buffer[0..<count]
            }
        }
    }

    @Test func linesFromManyThreadsArriveWholeAndInEachThreadsOrder() async throws {
        let pipe = Pipe()
        let sink = LogSink(descriptor: pipe.write)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for line in 0..<500 { sink.write(Array("w\(writer) \(line)\n".utf8)) }
                }
            }
        }
        sink.flush()
        let lines = String(decoding: pipe.drain(), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2000)
        for writer in 0..<4 {
            let own = lines.filter { $0.hasPrefix("w\(writer) ") }.map { Int($0.split(separator: " ")[1])! }
            #expect(own == Array(0..<500), "writer \(writer)'s lines are all there, in order")
        }
    }

    @Test func aLineIsWrittenWithoutAFlush() async throws {
        let pipe = Pipe()
        let sink = LogSink(descriptor: pipe.write)
        sink.write(Array("soon\n".utf8))
        var received: [UInt8] = []
        try await waitUntil("the writer thread wrote the line") {
            received += pipe.drain()
            return received == Array("soon\n".utf8)
        }
    }

    @Test func textLinesCarrySortedMetadataSourceAndMessage() async throws {
        let pipe = Pipe()
        let sink = LogSink(descriptor: pipe.write)
        var logger = Logger(label: "budget-server") { label in TextLogHandler(label: label, sink: sink) }
        logger[metadataKey: "z-handler"] = "kept"
        logger.info("GET /health 200", metadata: ["status": .stringConvertible(200), "method": "GET"])
        logger.debug("below the level")
        sink.flush()
        let line = String(decoding: pipe.drain(), as: UTF8.self)
        let pattern =
            #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ info budget-server: method=GET status=200 z-handler=kept \[LogHandlersTests\] GET /health 200\n$/#
        #expect(line.wholeMatch(of: pattern) != nil, "\(line)")
    }
}
