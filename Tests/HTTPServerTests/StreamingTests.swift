import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

/// A body of `pieces` pieces of `size` bytes each (piece n filled with the byte `n % 251`), or endless; it can
/// fail instead of making a piece, and it counts what the server asked of it.
private final class PieceStream: BodyStream, Sendable {
    private struct State {
        var made = 0
        var madeBytes = 0
        var closes = 0
        var callsAfterClose = 0
    }

    let pieces: Int?
    let size: Int
    /// The piece whose making throws, if any.
    let failingPiece: Int?
    private let state = Mutex(State())

    init(pieces: Int?, size: Int, failingPiece: Int? = nil) {
        self.pieces = pieces
        self.size = size
        self.failingPiece = failingPiece
    }

    var made: Int { state.withLock { $0.made } }
    var madeBytes: Int { state.withLock { $0.madeBytes } }
    var closes: Int { state.withLock { $0.closes } }
    var callsAfterClose: Int { state.withLock { $0.callsAfterClose } }

    struct PieceFailed: Error {}

    func next() async throws -> [UInt8]? {
        let number: Int? = state.withLock { state in
            if state.closes > 0 { state.callsAfterClose += 1 }
            guard pieces.map({ state.made < $0 }) ?? true else { return nil }
            state.made += 1
            state.madeBytes += size
            return state.made - 1
        }
        guard let number else { return nil }
        if number == failingPiece { throw PieceFailed() }
        return [UInt8](repeating: UInt8(number % 251), count: size)
    }

    func close() {
        state.withLock { $0.closes += 1 }
    }

    /// The body a client should read when every piece arrives.
    static func expected(pieces: Int, size: Int, prefix: [UInt8]) -> [UInt8] {
        prefix + (0..<pieces).flatMap { [UInt8](repeating: UInt8($0 % 251), count: size) }
    }
}

/// A router whose `/stream` answers with the stream `make` gives it, after a prefix in `body`.
private func makeStreamRouter(prefix: [UInt8] = Array("head:".utf8), _ make: @escaping @Sendable () -> PieceStream) -> Router<Void> {
    var router = Router<Void>()
    router.get("/stream") { _ in
        Response(status: .ok, headers: ["Content-Type": "application/octet-stream"], body: prefix, stream: make())
    }
    router.get("/hello") { _ in .text("hello") }
    return router
}

/// Hands one stream made by the router to the test.
private final class StreamBox: Sendable {
    private let stream = Mutex<PieceStream?>(nil)
    func keep(_ made: PieceStream) -> PieceStream {
        stream.withLock { $0 = made }
        return made
    }
    var value: PieceStream? { stream.withLock { $0 } }
}

/// A `TestClient` handed from one `runOffCooperativePool` call to the next; each use is awaited before the next.
private final class ClientBox: @unchecked Sendable {
    let client: TestClient
    init(port: Int) throws { client = try TestClient(port: port) }
}

extension OverRealSockets {
    /// Answers whose body a `BodyStream` makes while the connection sends it (RFC 9112 §7.1).
    @Suite struct Streaming {
        @Test func aStreamedBodyArrivesChunkedAndWhole() async throws {
            let box = StreamBox()
            try await withTestServer(handler: makeStreamRouter { box.keep(PieceStream(pieces: 40, size: 10_000)) }) { port, _ in
                let client = try await runOffCooperativePool { try ClientBox(port: port) }
                let answer = try await runOffCooperativePool { try client.client.request("GET", "/stream") }
                #expect(answer.status == 200)
                #expect(answer.isChunked)
                #expect(answer.header("Content-Length") == nil)
                #expect(answer.body == PieceStream.expected(pieces: 40, size: 10_000, prefix: Array("head:".utf8)))
                // The connection stays open for the next request: the last chunk ended the answer.
                let next = try await runOffCooperativePool { try client.client.request("GET", "/hello") }
                #expect(next.text == "hello")
                try await waitUntil("the stream is closed") { box.value?.closes == 1 }
            }
        }

        @Test func anHTTP10ClientGetsTheBodyUntilTheConnectionCloses() async throws {
            try await withTestServer(handler: makeStreamRouter { PieceStream(pieces: 5, size: 1000) }) { port, _ in
                let answer = try await runOffCooperativePool {
                    let client = try TestClient(port: port)
                    try client.send("GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                    return try client.readResponse()
                }
                #expect(!answer.isChunked)
                #expect(answer.header("Transfer-Encoding") == nil && answer.header("Content-Length") == nil)
                #expect(answer.header("Connection") == "close")
                #expect(answer.body == PieceStream.expected(pieces: 5, size: 1000, prefix: Array("head:".utf8)))
            }
        }

        @Test func aHeadRequestGetsTheHeadAndClosesTheStreamUnread() async throws {
            let box = StreamBox()
            try await withTestServer(handler: makeStreamRouter { box.keep(PieceStream(pieces: 5, size: 1000)) }) { port, _ in
                let answer = try await runOffCooperativePool { try TestClient(port: port).request("HEAD", "/stream") }
                #expect(answer.status == 200)
                #expect(answer.header("Transfer-Encoding") == "chunked")
                try await waitUntil("the stream is closed") { box.value?.closes == 1 }
                #expect(box.value?.made == 0)
            }
        }

        /// RFC 9112 §7.1, §8: an answer whose body fails half way ends without its last chunk, and the
        /// connection closes, so the client knows it is incomplete.
        @Test func aFailingPieceEndsTheAnswerIncomplete() async throws {
            let box = StreamBox()
            let log = LogCapture()
            try await withTestServer(handler: makeStreamRouter { box.keep(PieceStream(pieces: 10, size: 1000, failingPiece: 3)) }, log: log) {
                port, _ in
                let outcome = try await runOffCooperativePool { () -> Result<TestResponse, any Error> in
                    Result { try TestClient(port: port).request("GET", "/stream") }
                }
                guard case .failure(TestClient.Failure.incompleteChunkedBody(let head, let received)) = outcome else {
                    Issue.record("expected an incomplete chunked body, got \(outcome)")
                    return
                }
                #expect(head.status == 200)
                #expect(received.starts(with: PieceStream.expected(pieces: 3, size: 1000, prefix: Array("head:".utf8))))
                try await waitUntil("the stream is closed") { box.value?.closes == 1 }
                #expect(box.value?.callsAfterClose == 0)
                try await waitUntil("the failure is logged") { log.lines.contains { $0.contains("streamed answer to GET /stream failed") } }
            }
        }

        /// A client that stops reading holds back the producer: the stream makes a piece only once the last one
        /// left for the kernel, so what it made never runs ahead of what the client read by more than the
        /// kernel's buffers and one piece. Closing the connection closes the stream and asks for nothing more.
        @Test func aSlowReaderHoldsBackTheProducerAndLeavingClosesIt() async throws {
            let box = StreamBox()
            try await withTestServer(handler: makeStreamRouter { box.keep(PieceStream(pieces: nil, size: 64 * 1024)) }) { port, _ in
                let client = try await runOffCooperativePool { try ClientBox(port: port) }
                try await runOffCooperativePool {
                    try client.client.send("GET /stream HTTP/1.1\r\nHost: a\r\n\r\n")
                    _ = try client.client.readHead()
                }
                // The kernel's socket buffers on loopback hold at most a few MiB each way (tcp_wmem, tcp_rmem).
                let bound = 32 << 20
                var read = 0
                for _ in 0..<40 {
                    read += try await runOffCooperativePool { try client.client.readRaw(upTo: 256 * 1024).count }
                    let made = box.value?.madeBytes ?? 0
                    #expect(made <= read + bound, "the stream made \(made) bytes while the client read \(read)")
                }
                try await runOffCooperativePool { client.client.close() }
                try await waitUntil("the stream is closed") { box.value?.closes == 1 }
                #expect(box.value?.callsAfterClose == 0)
            }
        }
    }
}
