import Foundation
import Testing
import TestSupport

/// Settings the real process checks before it serves (docs/configuration.md).
@Suite struct StartupSettingsTests {
    @Test func anUnknownTimeZoneStopsTheServerWithAClearError() async throws {
        let url = try await TestDatabase.fresh()
        do {
            let server = try await ServerProcess.start(["--database-url", url, "--time-zone", "Mars/Olympus"])
            Issue.record("the server started on port \(server.port) with an unknown time zone")
        } catch ServerProcessError.exitedEarly(let status, let log) {
            #expect(status != 0)
            #expect(log.contains("'Mars/Olympus' is not a time zone PostgreSQL knows"), "\(log)")
        }
    }

    @Test func aKnownTimeZoneServes() async throws {
        let url = try await TestDatabase.fresh()
        let server = try await ServerProcess.start(["--database-url", url, "--time-zone", "Asia/Tokyo"])
        let answer = try await server.request("GET", "/categories?month=current")
        #expect(answer.status == 200)
        try await server.process.kill()
    }
}
