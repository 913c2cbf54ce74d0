import Foundation
import Glibc

/// Runs PostgreSQL programs, as the `postgres` OS user when we are root, and waits for them.
///
/// initdb and postgres refuse to run as root, so a root process runs them through
/// `runuser -u postgres --`, which needs no password and no terminal.
///
/// Programs are started with `posix_spawn` and reaped with `waitpid` rather than Foundation's `Process`:
/// on Linux, `Process` notices a child's exit through a socket the child inherits, and the postmaster
/// that `pg_ctl start` leaves running inherits it too, so `waitUntilExit()` would wait for the server
/// to stop (seen as a hang). Output goes to a temporary file, not a pipe, for the same reason.
struct CommandRunner: Sendable {
    let runsAsPostgresUser: Bool

    init() {
        runsAsPostgresUser = geteuid() == 0
    }

    /// Runs `executable` with `arguments`, returning its exit status and its combined stdout and stderr.
    func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let argv = (runsAsPostgresUser ? [Self.runuserPath, "-u", "postgres", "--", executable] : [executable]) + arguments
        var template = Array((NSTemporaryDirectory() + "pg-output-XXXXXX").utf8CString)
        let outputDescriptor = mkstemp(&template)
        guard outputDescriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        _ = fcntl(outputDescriptor, F_SETFD, FD_CLOEXEC)
        let output = FileHandle(fileDescriptor: outputDescriptor, closeOnDealloc: true)
        unlink(template)  // the open descriptor keeps the file readable; nothing is left behind

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outputDescriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, outputDescriptor, 2)
        // Keep our other descriptors (sockets, libpq connections) out of a long-lived postmaster.
        _ = Self.addCloseFrom?(&actions, 3)

        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid = pid_t()
        let spawnError = posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
        guard spawnError == 0 else {
            throw LocalClusterError.commandFailed(
                command: argv.joined(separator: " "), status: -1,
                output: String(cString: strerror(spawnError)))
        }
        var waitStatus: Int32 = 0
        while waitpid(pid, &waitStatus, 0) == -1 && errno == EINTR {}
        // WIFEXITED/WEXITSTATUS are C macros: low 7 bits are the signal, the next 8 the exit code.
        let signal = waitStatus & 0x7F
        let status = signal == 0 ? (waitStatus >> 8) & 0xFF : 128 + signal

        try output.seek(toOffset: 0)
        let data = try output.readToEnd() ?? Data()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return (status, text)
    }

    /// Runs a command that must succeed; a failure throws with the command line and its output.
    @discardableResult
    func runChecked(_ executable: String, _ arguments: [String]) throws -> String {
        let (status, output) = try run(executable, arguments)
        guard status == 0 else {
            let command = ([executable] + arguments).joined(separator: " ")
            throw LocalClusterError.commandFailed(command: command, status: status, output: output)
        }
        return output
    }

    /// Hands `path` to the `postgres` OS user (when we are root), so the server can write there.
    func giveToPostgresUser(_ path: String) throws {
        guard runsAsPostgresUser else { return }
        guard Self.postgresHome() != nil else { throw LocalClusterError.postgresUserMissing }
        try FileManager.default.setAttributes(
            [.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: path)
    }

    /// The `postgres` OS user's home folder; nil when there is no such user. Looked up with `getpwnam_r`:
    /// `getpwnam` answers in one buffer per process, which a lookup on another thread (Foundation's `chown`
    /// by name included) rewrites while it is read, and clusters start on many threads at once in the tests.
    static func postgresHome() -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        return buffer.withUnsafeMutableBufferPointer { storage in
            guard let start = storage.baseAddress, getpwnam_r("postgres", &entry, start, storage.count, &found) == 0, found != nil,
                let home = entry.pw_dir
            else { return nil }
            return String(cString: home)
        }
    }

    private static let runuserPath =
        ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"]
        .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) ?? "/usr/sbin/runuser"

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc ≥ 2.34 has `posix_spawn_file_actions_addclosefrom_np`, but Swift's Glibc module does not
    /// import it, so it is looked up at run time; without it descriptors are merely inherited.
    private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }
}
