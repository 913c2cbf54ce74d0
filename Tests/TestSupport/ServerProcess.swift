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
    /// The connections it may open on the suite's cluster, given back when it is released; nil on a cluster
    /// of its own.
    private let lease: ConnectionLease?

    /// Starts `budget-server serve` with `arguments` (add `--database-url` or `--data-dir`), on port 0 and
    /// the migrations built into it, and waits until it listens; a process that exits first fails with its log.
    ///
    /// Unless `arguments` say otherwise, the server waits up to 30 s for a database connection
    /// (`--pool-timeout`), as `TestApp`s do: on a loaded machine a connection can take longer than the 5 s
    /// of production to come free, and the 503 that would follow is not what the test asks about. On the
    /// suite's cluster it takes its connections from `ConnectionBudget` first, with two for large answers
    /// (`--stream-pool-size`) unless it is given more.
    public static func start(_ arguments: [String], startupTimeout: Duration = .seconds(90)) async throws -> ServerProcess {
        var arguments = arguments
        if !arguments.contains("--pool-timeout") { arguments += ["--pool-timeout", "30"] }
        if !arguments.contains("--stream-pool-size") { arguments += ["--stream-pool-size", "2"] }
        let lease = try await leaseConnections(for: arguments)
        let executable = try executablePath()
        let logPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("budget-server-\(UUID().uuidString.prefix(8)).log").path
        // The server reads its settings from the environment too; the test's own settings must not leak in.
        let environment = ProcessInfo.processInfo.environment.filter { !settingVariables.contains($0.key) }
        let process = try await ChildProcess.start(
            [
                executable, "serve", "--host", "127.0.0.1", "--port", "0",
                "--log-level", "info",
            ] + arguments,
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
        return ServerProcess(process: process, port: port ?? 0, lease: lease)
    }

    private init(process: ChildProcess, port: Int, lease: ConnectionLease?) {
        self.process = process
        self.port = port
        self.lease = lease
    }

    /// The connections a server with `arguments` opens at most (docs/operations.md, Connection budget), plus
    /// the one it migrates with, taken from the budget when its database is on the suite's cluster.
    private static func leaseConnections(for arguments: [String]) async throws -> ConnectionLease? {
        guard let index = arguments.firstIndex(of: "--database-url"), index + 1 < arguments.count,
            TestDatabase.isShared(arguments[index + 1])
        else { return nil }
        func value(_ flag: String, default defaultValue: Int) -> Int {
            arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil } ?? defaultValue
        }
        let loops = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let count =
            value("--pool-size", default: 8) + loops * value("--loop-connections", default: 4)
            + value("--stream-pool-size", default: 8) + 3
        return try await ConnectionBudget.shared().lease(count, for: "a budget-server process")
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
