import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// A program a test started, with its output in a file, that is killed when the test is done with it.
///
/// Started with `posix_spawn` rather than Foundation's `Process`, for the reason `CommandRunner` gives: on
/// Linux `Process` watches a child through a descriptor the child inherits, and a PostgreSQL started by
/// the child inherits it as well. Output goes to a file, not a pipe, so a chatty child never blocks on a
/// full pipe and the test can read the log at any time.
///
/// A child still running when its `ChildProcess` is released, or when the test process exits, gets SIGKILL:
/// a failing test must not leave a server behind holding a port or a database. That holds even when the
/// test process is killed (a closed output pipe, a timeout): children start under `setpriv --pdeathsig
/// KILL` from a thread that lives as long as the process. Its output file is deleted on release unless
/// `KEEP_TEST_LOGS` is set.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The file holding the child's standard output and standard error.
    public let outputPath: String
    /// The exit status once reaped: the exit code, or 128 + the signal that killed it (as a shell reports it).
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `arguments[0]` with the rest as its arguments, stdin from /dev/null, stdout and stderr to `outputPath`.
    ///
    /// - Parameter environment: the child's environment; nil passes the test process's own.
    public static func start(
        _ arguments: [String], environment: [String: String]? = nil, outputPath: String
    ) async throws -> ChildProcess {
        precondition(!arguments.isEmpty, "a child needs a program")
        let argv = Self.setprivPath.map { [$0, "--pdeathsig", "KILL", "--"] + arguments } ?? arguments
        return try await Spawner.shared.run {
            try ChildProcess(argv, environment: environment ?? ProcessInfo.processInfo.environment, outputPath: outputPath)
        }
    }

    /// util-linux's `setpriv`, which sets the parent-death signal and then runs the program in its place.
    private static let setprivPath = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: FileManager.default.isExecutableFile(atPath:))

    /// Spawns at once, on the calling thread (the spawner's).
    private init(_ arguments: [String], environment: [String: String], outputPath: String) throws {
        self.outputPath = outputPath
        let descriptor = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ChildProcessError.system("open \(outputPath)", errno) }
        defer { close(descriptor) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, descriptor, 2)
        // Other tests' sockets and libpq connections must not stay open in the child.
        _ = Self.addCloseFrom?(&actions, 3)

        // Signal dispositions the test runner changed must not leak into the child: SIGTERM and SIGINT
        // are what the tests send, and a child that inherited "ignore" would never hear them.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGTERM, SIGINT, SIGQUIT, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let cArguments = arguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var child = pid_t()
        let spawnError = posix_spawn(&child, arguments[0], &actions, &attributes, cArguments, cEnvironment)
        guard spawnError == 0 else { throw ChildProcessError.system("posix_spawn \(arguments[0])", spawnError) }
        pid = child
        LiveChildren.shared.add(child)
    }

    deinit {
        if exitStatus.withLock({ $0 == nil }) {
            Glibc.kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
        // Failure messages quote the log's tail; KEEP_TEST_LOGS=1 keeps the whole file for a closer look.
        if ProcessInfo.processInfo.environment["KEEP_TEST_LOGS"] == nil { unlink(outputPath) }
    }

    /// Sends `signal` to the child (unless it has been reaped already, when the pid may be someone else's).
    public func send(_ signal: Int32) {
        exitStatus.withLock { status in
            if status == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// The exit status if the child has exited (reaping it), nil while it runs; never blocks.
    public var exitStatusIfExited: Int32? {
        reap(blocking: false)
    }

    public var isRunning: Bool { exitStatusIfExited == nil }

    /// Waits until the child exits and answers its exit status; fails after `timeout`.
    public func waitForExit(timeout: Duration) async throws -> Int32 {
        var status: Int32?
        try await waitUntil("process \(pid) (\(outputPath)) exits", timeout: timeout) {
            status = exitStatusIfExited
            return status != nil
        }
        return status ?? -1
    }

    /// Kills the child with SIGKILL and reaps it, off the cooperative pool.
    public func kill() async throws {
        send(SIGKILL)
        _ = try await runOffCooperativePool { [self] in reap(blocking: true) }
    }

    /// What the child wrote so far.
    public var output: String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    /// The last `count` lines of the output, for failure messages.
    public func outputTail(_ count: Int = 30) -> String {
        output.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
    }

    /// Reaps the child once; the status is remembered, so the pid is never waited for (or signalled) again.
    private func reap(blocking: Bool) -> Int32? {
        exitStatus.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &raw, blocking ? 0 : WNOHANG) } while result == -1 && errno == EINTR
            guard result == pid else { return nil }
            // WIFEXITED/WEXITSTATUS are C macros: the low 7 bits are the signal, the next 8 the exit code.
            let signal = raw & 0x7F
            status = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
            LiveChildren.shared.remove(pid)
            return status
        }
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc ≥ 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not import.
    private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }
}

public enum ChildProcessError: Error, CustomStringConvertible {
    case system(String, Int32)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }
}

/// The thread every child is started from, which lives as long as the test process.
///
/// Linux sends a child its parent-death signal when the *thread* that started it ends, not the process: a
/// child started from a short-lived thread would be killed with that thread.
// @unchecked Sendable: `jobs` is guarded by `condition`.
private final class Spawner: @unchecked Sendable {
    static let shared = Spawner()

    private let condition = NSCondition()
    private var jobs: [() -> Void] = []  // guarded by condition

    private init() {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }
        thread.name = "test-child-spawner"
        thread.start()
    }

    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            condition.withLock {
                jobs.append { continuation.resume(with: Result { try body() }) }
                condition.signal()
            }
        }
    }
}

/// Children not yet reaped, killed when the test process exits however the tests ended.
private final class LiveChildren: Sendable {
    static let shared: LiveChildren = {
        let children = LiveChildren()
        atexit { LiveChildren.shared.killAll() }
        return children
    }()

    private let pids = Mutex<Set<pid_t>>([])

    func add(_ pid: pid_t) { pids.withLock { _ = $0.insert(pid) } }
    func remove(_ pid: pid_t) { pids.withLock { _ = $0.remove(pid) } }

    func killAll() {
        for pid in pids.withLock({ $0 }) { Glibc.kill(pid, SIGKILL) }
    }
}

/// Whether process `pid` exists and is not a zombie; for processes that are not our children (a postmaster).
public func isProcessAlive(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0 || errno == EPERM else { return false }
    guard let stat = readProcFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return true }
    // The state is the first field after the command name, which is in parentheses and may hold spaces.
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
}

/// The text of a file under /proc, read to its end: those files report a size of 0, which makes
/// Foundation's `String(contentsOfFile:)` read nothing.
public func readProcFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
        bytes += chunk[..<count]
    }
}
