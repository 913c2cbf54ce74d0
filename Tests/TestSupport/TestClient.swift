import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A response as `TestClient` read it off the wire.
public struct TestResponse: Sendable {
    public var status: Int
    public var reason: String
    public var headers: [(name: String, value: String)]
    /// The body; for a chunked answer, its chunks decoded and joined.
    public var body: [UInt8]
    /// Whether the body came in chunks (`Transfer-Encoding: chunked`, RFC 9112 §7.1).
    public var isChunked = false

    /// The first value of a header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed with JSONSerialization (dictionary, array, …).
    public func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
    }

    /// The body decoded as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(body))
    }
}

private enum ASCIIByte {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
}

/// A small blocking HTTP/1.1 client over one raw TCP connection, for tests that must talk to a
/// real socket (keep-alive, pipelining, limits, malformed framing).
///
/// It blocks the calling thread; every read gives up after `timeout` so a broken server fails
/// the test instead of hanging it. The default is a hang detector, not a speed bound: 10 s was seen
/// to run out (recv EAGAIN) for ordinary requests while `swift test` shared two cores with a build.
public final class TestClient {
    public enum Failure: Error, CustomStringConvertible {
        case system(String, Int32)
        case closedByPeer
        case malformedResponse(String)
        /// The connection ended inside a chunked body, before its last chunk: the answer is incomplete.
        case incompleteChunkedBody(head: TestResponse, received: [UInt8])

        public var description: String {
            switch self {
            case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
            case .closedByPeer: "the server closed the connection"
            case .malformedResponse(let why): "malformed response: \(why)"
            case .incompleteChunkedBody(let head, let received):
                "the connection ended inside the chunked body of a \(head.status) after \(received.count) bytes, before its last chunk"
            }
        }
    }

    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var isClosed = false

    public init(port: Int, host: String = "127.0.0.1", timeout: Duration = .seconds(30)) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure.system("socket", errno) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw Failure.system("connect", code)
        }
        let seconds = timeout.components.seconds
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
    }

    public func send(_ raw: String) throws {
        try send(Array(raw.utf8))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure.system("send", errno) }
            offset += sent
        }
    }

    /// Sends one request with `Host`, optional JSON body and extra headers, and reads the answer.
    public func request(
        _ method: String, _ path: String, json body: String? = nil, headers: [(String, String)] = []
    ) throws -> TestResponse {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: localhost\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let bodyBytes = Array((body ?? "").utf8)
        if let body {
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
                head += "Content-Type: application/json\r\n"
            }
            head += "Content-Length: \(body.utf8.count)\r\n"
        }
        try send(Array((head + "\r\n").utf8) + bodyBytes)
        return try readResponse(toHead: method == "HEAD")
    }

    /// Reads one response (an interim 1xx counts as one); the body is framed by Content-Length or chunked
    /// (decoded), absent for HEAD, 1xx, 204 and 304, and read to the end of the stream when there is neither.
    public func readResponse(toHead isHead: Bool = false) throws -> TestResponse {
        var response = try readHead()
        let status = response.status
        if isHead || (100..<200).contains(status) || status == 204 || status == 304 { return response }
        if response.isChunked {
            response.body = try readChunkedBody(of: response)
        } else if let length = response.header("Content-Length").flatMap(Int.init) {
            while buffer.count < length { try fill() }
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            while (try? fill()) != nil {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Reads one head of a response and stops: for tests that read its body themselves (slowly, or never).
    public func readHead() throws -> TestResponse {
        let headEnd = try readUntil(Array("\r\n\r\n".utf8))
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2).map(String.init)
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure.malformedResponse("status line \(statusLine)")
        }
        var response = TestResponse(status: status, reason: statusLine.count > 2 ? statusLine[2] : "", headers: [], body: [])
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Failure.malformedResponse("header line \(line)") }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            response.headers.append((name: String(line[..<colon]), value: value))
        }
        response.isChunked = response.header("Transfer-Encoding")?.lowercased() == "chunked"
        return response
    }

    /// Reads the rest of a chunked body whose head `readHead()` read: the chunks decoded and joined.
    /// Throws `incompleteChunkedBody` when the connection ends before the last chunk.
    ///
    /// - Parameter readSize: the most bytes one read takes from the socket: a small one makes a slow reader,
    ///   which keeps the server's socket buffer full.
    public func readChunkedBody(of head: TestResponse, readSize: Int = 65536) throws -> [UInt8] {
        var body: [UInt8] = []
        do {
            while true {
                let lineEnd = try readUntil(Array("\r\n".utf8), readSize: readSize)
                let sizeText = String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                    throw Failure.malformedResponse("chunk size line \(sizeText)")
                }
                buffer.removeFirst(lineEnd + 2)
                if size == 0 {
                    // The trailer section, empty here, ends with an empty line.
                    let trailerEnd = try readUntil(Array("\r\n".utf8), readSize: readSize)
                    buffer.removeFirst(trailerEnd + 2)
                    return body
                }
                while buffer.count < size + 2 { try fill(upTo: readSize) }
                body += buffer[..<size]
                guard buffer[size] == ASCIIByte.cr, buffer[size + 1] == ASCIIByte.lf else {
                    throw Failure.malformedResponse("chunk of \(size) bytes not followed by CRLF")
                }
                buffer.removeFirst(size + 2)
            }
        } catch Failure.closedByPeer {
            throw Failure.incompleteChunkedBody(head: head, received: body + buffer)
        }
    }

    /// Reads at most `count` more bytes of whatever the server sent, without framing: for a test that reads
    /// slowly. Answers fewer at the end of the stream.
    public func readRaw(upTo count: Int) throws -> [UInt8] {
        if buffer.isEmpty { try fill(upTo: count) }
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(taken.count)
        return taken
    }

    /// True when the server has closed the connection (reads end of stream) within the timeout.
    public func isClosedByServer() -> Bool {
        while true {
            do { try fill() } catch Failure.closedByPeer { return true } catch { return false }
        }
    }

    private func readUntil(_ marker: [UInt8], readSize: Int = 65536) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for start in searchFrom...(buffer.count - marker.count) where buffer[start..<(start + marker.count)].elementsEqual(marker) {
                    return start
                }
                searchFrom = buffer.count - marker.count + 1
            }
            try fill(upTo: readSize)
        }
    }

    private func fill(upTo limit: Int = 65536) throws {
        var chunk = [UInt8](repeating: 0, count: limit)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        // A reset after the server's last answer still means "closed" to a test.
        if count == 0 || (count < 0 && errno == ECONNRESET) { throw Failure.closedByPeer }
        guard count > 0 else { throw Failure.system("recv", errno) }
        buffer.append(contentsOf: chunk[..<count])
    }
}
