import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The built `budget-server` executable serving on an ephemeral port, for tests of what only a real
/// process shows: signals, exit statuses, `kill -9`, a database that goes away under it.
///
/// `swift build --build-tests` (and `swift test`) build the executable next to the test bundle; the
/// process is killed when the `ServerProcess` is released, and at the latest when the test process exits.
public final class ServerProcess: Sendable {
    public let process: ChildProcess
    public let port: Int

    /// Starts `budget-server serve` with `arguments` (add `--database-url` or `--data-dir`), on port 0 and
    /// the migrations built into it, and waits until it listens; a process that exits first fails with its log.
    public static func start(_ arguments: [String], startupTimeout: Duration = .seconds(90)) async throws -> ServerProcess {
        let executable = try executablePath()
        let logPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("budget-server-\(UUID().uuidString.prefix(8)).log").path
        // The server reads its settings from the environment too; the test's own settings must not leak in.
        let environment = ProcessInfo.processInfo.environment.filter { !settingVariables.contains($0.key) }
        let process = try await ChildProcess.start(
            [executable, "serve", "--host", "127.0.0.1", "--port", "0",
             "--log-level", "info"] + arguments,
            environment: environment, outputPath: logPath)
        var port: Int?
        do {
            try await waitUntil("budget-server logs the port it listens on", timeout: startupTimeout) {
                if let exited = process.exitStatusIfExited {
                    throw ServerProcessError.exitedEarly(status: exited, log: process.outputTail())
                }
                port = Self.listeningPort(in: process.output)
                return port != nil
            }
        } catch let error as WaitTimedOut {
            throw ServerProcessError.notListening(error.description, log: process.outputTail())
        }
        return ServerProcess(process: process, port: port ?? 0)
    }

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Environment variables `budget-server` takes settings from (docs/configuration.md).
    static let settingVariables: Set<String> = [
        "HOST", "PORT", "DATABASE_URL", "BUDGET_DATA_DIR", "MIGRATIONS_DIR", "POOL_SIZE", "LOG_LEVEL", "LOG_FORMAT",
        "BUDGET_API_TOKEN", "TIME_ZONE",
    ]

    /// The port in the server's `listening on http://127.0.0.1:port` line, in either log format.
    static func listeningPort(in log: String) -> Int? {
        guard let start = log.range(of: "listening on http://") else { return nil }
        let hostAndPort = log[start.upperBound...]
        guard let colon = hostAndPort.firstIndex(of: ":") else { return nil }
        let rest = hostAndPort[hostAndPort.index(after: colon)...]
        let digits = rest.prefix(while: \.isNumber)
        // Something after the digits: the line was read whole, not while the server was still writing it.
        guard digits.endIndex < rest.endIndex else { return nil }
        return Int(digits)
    }

    /// The executable: `BUDGET_SERVER_EXECUTABLE`, else the `budget-server` this package built.
    public static func executablePath() throws -> String {
        if let path = ProcessInfo.processInfo.environment["BUDGET_SERVER_EXECUTABLE"], !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else { throw ServerProcessError.missingExecutable([path]) }
            return path
        }
        return try BuiltExecutable.path(of: "budget-server")
    }

    /// The server's log so far (standard error and standard output).
    public var log: String { process.output }

    /// One request on a new connection, on a thread of its own; the client gives up after `timeout`.
    public func request(
        _ method: String, _ path: String, json body: String? = nil, headers: [(String, String)] = [],
        timeout: Duration = .seconds(30)
    ) async throws -> TestResponse {
        try await runOffCooperativePool { [port] in
            try TestClient(port: port, timeout: timeout).request(method, path, json: body, headers: headers)
        }
    }

    /// Whether every connection to the server has been read by it to the end: none has request bytes
    /// waiting in the kernel. Once a request was sent and this holds, the server holds the request (it
    /// parses what it reads at once), so a signal sent now finds it in flight rather than unread.
    ///
    /// Reads the receive queues of the server's side of its TCP connections from /proc/net/tcp.
    public func hasReadEverything(expectedConnections: Int) throws -> Bool {
        guard let table = readProcFile("/proc/net/tcp") else { throw ChildProcessError.system("read /proc/net/tcp", errno) }
        let localPort = String(format: "%04X", port)
        var connections = 0
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // sl, local_address, rem_address, st, tx_queue:rx_queue, …; 01 is ESTABLISHED.
            guard fields.count > 4, fields[1].hasSuffix(":" + localPort), fields[3] == "01" else { continue }
            connections += 1
            guard let queues = fields[4].split(separator: ":").last, let waiting = Int(queues, radix: 16) else { continue }
            if waiting > 0 { return false }
        }
        return connections >= expectedConnections
    }
}

public enum ServerProcessError: Error, CustomStringConvertible {
    case missingExecutable([String])
    case exitedEarly(status: Int32, log: String)
    case notListening(String, log: String)

    public var description: String {
        switch self {
        case .missingExecutable(let searched):
            "BUDGET_SERVER_EXECUTABLE names no executable (\(searched.joined(separator: ", ")))"
        case .exitedEarly(let status, let log):
            "budget-server exited with status \(status) before listening; its log ends:\n\(log)"
        case .notListening(let why, let log):
            "\(why); its log ends:\n\(log)"
        }
    }
}
