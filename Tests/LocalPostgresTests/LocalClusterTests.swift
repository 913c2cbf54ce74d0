import Foundation
import LocalPostgres
import Logging
import Postgres
import Testing
import TestSupport

@Suite("LocalCluster runs a private PostgreSQL")
struct LocalClusterTests {
    private let logger = Logger(label: "LocalClusterTests")

    private func temporaryFolder() throws -> URL {
        var template = Array("/tmp/lc-XXXXXX".utf8CString)
        let path = try #require(mkdtemp(&template))
        return URL(fileURLWithPath: String(cString: path))
    }

    // initdb and pg_ctl block for seconds; on the cooperative pool (two threads here) they would stall every
    // other suite's server, so each scenario runs on a thread of its own and the test checks what it saw.

    @Test func keepsDataAcrossStopAndStart() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cluster = LocalCluster(directory: folder, logger: logger, settings: ["fsync": "off"])
        defer { try? cluster.stop() }
        let seen = try await runOffCooperativePool { try Self.stopAndStartKeepingData(cluster) }
        #expect(seen.wasRunningBeforeStart == false)
        #expect(seen.isRunningAfterStart)
        #expect(seen.url.hasPrefix("postgresql:///postgres?host=\(folder.path)"))
        #expect(seen.hasSocketAndLog)
        #expect(seen.isRunningAfterStop == false)
        #expect(seen.connectingAfterStopFailed)
        #expect(seen.keptNote == "still here")
        // Only the Unix socket: no TCP listener.
        #expect(seen.listenAddresses == "")
    }

    private struct StopStartObservations: Sendable {
        var wasRunningBeforeStart = true, isRunningAfterStart = false, url = "", hasSocketAndLog = false
        var isRunningAfterStop = true, connectingAfterStopFailed = false, keptNote: String?, listenAddresses: String?
    }

    private static func stopAndStartKeepingData(_ cluster: LocalCluster) throws -> StopStartObservations {
        var seen = StopStartObservations()
        seen.wasRunningBeforeStart = try cluster.isRunning()
        seen.url = try cluster.start()
        seen.isRunningAfterStart = try cluster.isRunning()
        seen.hasSocketAndLog =
            FileManager.default.fileExists(atPath: "\(cluster.socketDirectory)/.s.PGSQL.5432")
            && FileManager.default.fileExists(atPath: cluster.logFile)
        try cluster.createDatabase("budget")
        do {
            let connection = try Connection.connect(to: cluster.url(database: "budget"))
            try connection.execute("CREATE TABLE kept (note text)")
            try connection.execute("INSERT INTO kept VALUES (\("still here"))")
        }
        try cluster.stop()
        seen.isRunningAfterStop = try cluster.isRunning()
        seen.connectingAfterStopFailed = (try? Connection.connect(to: seen.url)) == nil
        // Starting twice in a row is harmless: the second start finds it running.
        _ = try cluster.start()
        _ = try cluster.start()
        let connection = try Connection.connect(to: cluster.url(database: "budget"))
        seen.keptNote = try connection.query("SELECT note FROM kept")[0].decode(String.self, at: 0)
        seen.listenAddresses = try connection.query("SHOW listen_addresses")[0].decode(String.self, at: 0)
        connection.close()
        try cluster.stop()
        return seen
    }

    @Test func restartsAfterACrashLeavesAStalePidFile() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cluster = LocalCluster(directory: folder, logger: logger, settings: ["fsync": "off"])
        defer { try? cluster.stop() }
        let answer = try await runOffCooperativePool { () throws -> Int? in
            _ = try cluster.start()
            let pidFile = try String(contentsOfFile: "\(cluster.dataDirectory)/postmaster.pid", encoding: .utf8)
            guard let postmaster = pid_t(pidFile.split(separator: "\n")[0]) else { return nil }
            kill(postmaster, SIGKILL)
            let killed = ContinuousClock.now + .seconds(30)
            while kill(postmaster, 0) == 0 {
                guard ContinuousClock.now < killed else { throw WaitTimedOut(description: "the postmaster \(postmaster) outlived SIGKILL") }
                usleep(10_000)
            }
            // Backends notice their postmaster died and exit; a new postmaster refuses to start before that.
            let deadline = ContinuousClock.now + .seconds(10)
            var url: String?
            while url == nil, ContinuousClock.now < deadline {
                url = try? cluster.start()
                if url == nil { usleep(200_000) }
            }
            guard let url else { return nil }
            return try Connection.connect(to: url).query("SELECT 1")[0].decode(Int.self, at: 0)
        }
        #expect(answer == 1)
    }

    /// A postmaster.pid left by a crash whose pid now names another live process (on a busy machine pids
    /// come back soon) is neither believed nor signalled: `pg_ctl stop` would have sent that stranger SIGINT,
    /// which once shut down the cluster every other suite was using. Starting removes the stale file.
    @Test func aStalePidFileNamingAnotherProcessIsNotSignalled() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cluster = LocalCluster(directory: folder, logger: logger, settings: ["fsync": "off"])
        defer { try? cluster.stop() }
        let stranger = try await ChildProcess.start(["/bin/sleep", "120"], outputPath: folder.path + "-stranger.log")
        defer { try? FileManager.default.removeItem(atPath: folder.path + "-stranger.log") }
        let seen = try await runOffCooperativePool { () throws -> (isRunning: Bool, answer: Int?) in
            _ = try cluster.start()
            try cluster.stop()
            // What a crash leaves behind, with the pid of a live process that is not a postmaster of ours.
            try "\(stranger.pid)\n\(cluster.dataDirectory)\n".write(
                toFile: "\(cluster.dataDirectory)/postmaster.pid", atomically: false, encoding: .utf8)
            let isRunning = try cluster.isRunning()
            try cluster.stop()
            let url = try cluster.start()
            let answer = try Connection.connect(to: url).query("SELECT 1")[0].decode(Int.self, at: 0)
            return (isRunning, answer)
        }
        #expect(seen.isRunning == false)
        #expect(cluster.postmasterPID() != stranger.pid)
        #expect(stranger.isRunning, "the process the stale file named was not signalled")
        #expect(seen.answer == 1, "the cluster started despite the stale file")
        try await stranger.kill()
    }

    @Test func createDatabaseCopiesATemplate() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cluster = LocalCluster(directory: folder, logger: logger, settings: ["fsync": "off"])
        defer { try? cluster.stop() }
        let copied = try await runOffCooperativePool {
            _ = try cluster.start()
            try cluster.createDatabase("original")
            let original = try Connection.connect(to: cluster.url(database: "original"))
            try original.execute("CREATE TABLE copied (x int)")
            original.close()
            try cluster.createDatabase("weird \"name\"", template: "original")
            let copy = try Connection.connect(to: cluster.url(database: "weird \"name\""))
            return try copy.query("SELECT to_regclass('copied') IS NOT NULL")[0].decode(Bool.self, at: 0)
        }
        #expect(copied)
    }

    @Test func missingPostgreSQLSaysWhatWasSearchedAndWhatToInstall() throws {
        let cluster = LocalCluster(
            directory: URL(fileURLWithPath: "/tmp/lc-never-created"), logger: logger,
            searchPath: ["/nonexistent/postgres/bin"])
        #expect {
            try cluster.start()
        } throws: { error in
            guard case .postgresNotInstalled(let searched) = error as? LocalClusterError else { return false }
            let message = "\(error)"
            return searched == ["/nonexistent/postgres/bin"] && message.contains("/nonexistent/postgres/bin")
                && message.contains("apt-get install postgresql")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/lc-never-created"))
    }

    @Test func tooLongFolderIsRefusedClearly() throws {
        let long = URL(fileURLWithPath: "/tmp/" + String(repeating: "x", count: 100))
        #expect {
            try LocalCluster(directory: long, logger: logger).start()
        } throws: { error in
            guard case .socketPathTooLong = error as? LocalClusterError else { return false }
            return "\(error)".contains("too long")
        }
    }
}
