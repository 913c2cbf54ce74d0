import Foundation
@testable import LocalPostgres
import Logging
import Postgres
import Testing
import TestSupport

/// Where a root process runs a cluster whose folder the `postgres` user cannot reach (docs/configuration.md).
@Suite struct ClusterPlacementTests {
    @Test func decidesFromTheFactsAlone() {
        #expect(
            ClusterPlacement.decide(runsAsPostgresUser: false, blockedFolder: "/tmp/x", holdsFiles: false, hasHomeFolder: true)
                == .runWhereAsked)
        #expect(
            ClusterPlacement.decide(runsAsPostgresUser: true, blockedFolder: nil, holdsFiles: true, hasHomeFolder: true)
                == .runWhereAsked)
        #expect(
            ClusterPlacement.decide(runsAsPostgresUser: true, blockedFolder: "/tmp/x", holdsFiles: false, hasHomeFolder: true)
                == .move(blockedFolder: "/tmp/x"))
        // Data already there is never left behind, and without a home folder there is nowhere to go.
        #expect(
            ClusterPlacement.decide(runsAsPostgresUser: true, blockedFolder: "/tmp/x", holdsFiles: true, hasHomeFolder: true)
                == .refuse(blockedFolder: "/tmp/x"))
        #expect(
            ClusterPlacement.decide(runsAsPostgresUser: true, blockedFolder: "/tmp/x", holdsFiles: false, hasHomeFolder: false)
                == .refuse(blockedFolder: "/tmp/x"))
    }

    @Test func listsTheExistingFoldersAboveAPath() {
        #expect(ClusterPlacement.existingParents(of: "/tmp/no-such-folder-here/.budget-data") == ["/tmp"])
    }

    /// `cd "$(mktemp -d)" && budget-server` as root: the default `./.budget-data` sits in a 0700 folder of root's.
    @Test(.enabled(if: geteuid() == 0, "only root runs PostgreSQL as another user"))
    func rootStartsFromAPrivateTemporaryFolder() async throws {
        var template = Array("/tmp/cp-XXXXXX".utf8CString)
        let working = URL(fileURLWithPath: String(cString: try #require(mkdtemp(&template))))  // mode 0700, as mktemp -d
        defer { try? FileManager.default.removeItem(at: working) }
        let requested = working.appendingPathComponent(".budget-data")

        let placement = try ClusterPlacement.resolve(requested)
        defer { try? FileManager.default.removeItem(at: placement.directory) }
        #expect(placement.blockedFolder == working.path)
        #expect(placement.directory.path.hasPrefix("/var/lib/postgresql/budget-server/budget-data-"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: requested.path) == placement.directory.path)

        let cluster = LocalCluster(
            directory: placement.directory, logger: Logger(label: "ClusterPlacementTests"),
            settings: ["fsync": "off"])
        defer { try? cluster.stop() }
        let answer = try await runOffCooperativePool { () throws -> String? in
            let connection = try Connection.connect(to: try cluster.start())
            defer { connection.close() }
            return try connection.query("SELECT 'up'")[0].column(0)
        }
        #expect(answer == "up")
        // The next start with the same folder follows the link to the same cluster.
        let again = try ClusterPlacement.resolve(requested)
        #expect(again.directory.path == placement.directory.path)
        #expect(again.blockedFolder == nil)
    }

    @Test(.enabled(if: geteuid() == 0, "only root runs PostgreSQL as another user"))
    func rootRefusesToLeaveDataBehindAndNamesTheFolder() throws {
        var template = Array("/tmp/cp-XXXXXX".utf8CString)
        let working = URL(fileURLWithPath: String(cString: try #require(mkdtemp(&template))))
        defer { try? FileManager.default.removeItem(at: working) }
        let requested = working.appendingPathComponent("data-dir")
        try FileManager.default.createDirectory(at: requested, withIntermediateDirectories: true)
        try Data("kept".utf8).write(to: requested.appendingPathComponent("note"))
        #expect {
            try ClusterPlacement.resolve(requested)
        } throws: { error in
            guard case LocalClusterError.directoryNotAccessible(let path, let blocked) = error else { return false }
            return path == requested.path && blocked == working.path && "\(error)".contains("search (x) permission")
        }
    }
}
