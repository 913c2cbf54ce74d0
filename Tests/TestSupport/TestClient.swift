import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response as `TestClient` read it off the wire.
public struct TestResponse: Sendable {
    public var status: Int
    public var reason: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

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

        public var description: String {
            switch self {
            case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
            case .closedByPeer: "the server closed the connection"
            case .malformedResponse(let why): "malformed response: \(why)"
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

    /// Reads one response (an interim 1xx counts as one); the body is framed by Content-Length,
    /// absent for HEAD, 1xx, 204 and 304, and read to the end of the stream when there is no length.
    public func readResponse(toHead isHead: Bool = false) throws -> TestResponse {
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
        if isHead || (100..<200).contains(status) || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
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

    /// True when the server has closed the connection (reads end of stream) within the timeout.
    public func isClosedByServer() -> Bool {
        while true {
            do { try fill() } catch Failure.closedByPeer { return true } catch { return false }
        }
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for start in searchFrom...(buffer.count - marker.count) where buffer[start..<(start + marker.count)].elementsEqual(marker) {
                    return start
                }
                searchFrom = buffer.count - marker.count + 1
            }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        // A reset after the server's last answer still means "closed" to a test.
        if count == 0 || (count < 0 && errno == ECONNRESET) { throw Failure.closedByPeer }
        guard count > 0 else { throw Failure.system("recv", errno) }
        buffer.append(contentsOf: chunk[..<count])
    }
}
