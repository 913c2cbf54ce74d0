import Foundation
import Postgres
import Testing
import TestSupport

/// A client that reads a large list slowly costs the real server a bounded buffer, not the answer: the server
/// reads the next rows only once the last ones left for the kernel (docs/api.md, Large answers).
@Suite struct SlowReaderTests {
    /// About 31 MB of posts: the answer the server would hold three times over if it built it in memory.
    static let posts = 30_000

    @Test func aSlowReaderOfALargeListHoldsABoundedBuffer() async throws {
        let url = try await TestDatabase.fresh()
        let server = try await ServerProcess.start(["--database-url", url])
        try await runOffCooperativePool {
            let connection = try Connection.connect(to: url)
            defer { connection.close() }
            try connection.execute(
                script: """
                    INSERT INTO collections (ledger_id, name, kind, next_id) VALUES (1, 'posts', 'plural', \(Self.posts + 1));
                    INSERT INTO documents (ledger_id, collection, id, body)
                    SELECT 1, 'posts', i::text, json_build_object('id', i, 'title', 'post ' || i, 'body', repeat('x', 1000))::json
                    FROM generate_series(1, \(Self.posts)) AS i;
                    """)
        }
        // Warm the server up on a list of its own (cursors prepared, the stream pool connected), so the peak
        // below is the slow answer's.
        let small = try await server.request("GET", "/posts?_limit=500")
        #expect(small.status == 200)
        let before = try Self.kibibytes("VmHWM", of: server.process.pid)

        let reader = try await runOffCooperativePool { try SlowClient(port: server.port) }
        let head = try await runOffCooperativePool { try reader.start() }
        #expect(head.status == 200 && head.isChunked)
        // A slow reader: 2 KiB a read, so the server meets a full socket again and again.
        let body = try await runOffCooperativePool { try reader.client.readChunkedBody(of: head, readSize: 2048) }
        let records = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [Any])
        #expect(records.count == Self.posts)
        let peak = try Self.kibibytes("VmHWM", of: server.process.pid)
        print("slow reader: \(body.count) bytes streamed; the server's peak RSS grew by \(peak - before) KiB")
        // The answer is 31 MB; the server held a batch of rows and a piece of the body at a time.
        #expect(peak - before < 16 * 1024, "the server's peak RSS grew by \(peak - before) KiB while streaming \(body.count) bytes")
    }

    /// A field of /proc/PID/status in KiB.
    static func kibibytes(_ field: String, of pid: pid_t) throws -> Int {
        guard let status = readProcFile("/proc/\(pid)/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else {
            throw ChildProcessError.system("read \(field) of /proc/\(pid)/status", errno)
        }
        return value
    }
}

/// A client reading one answer in parts; each use is awaited before the next, so no two threads share it.
private final class SlowClient: @unchecked Sendable {
    let client: TestClient

    init(port: Int) throws {
        client = try TestClient(port: port)
    }

    func start() throws -> TestResponse {
        try client.send("GET /posts HTTP/1.1\r\nHost: localhost\r\n\r\n")
        return try client.readHead()
    }
}
