import Foundation
import Testing
import APITestSupport
import TestSupport

/// Ten thousand changes pull in bounded memory (#14): the client keeps one page at a time, so pulling
/// about 10 MB of records must not leave anything like 10 MB more resident.
///
/// The client is the built `budget-sync-bench pull`, in a process of its own, so the resident memory it
/// reports (/proc/self/status) is the client's alone, not the test runner's or the server's. It stores
/// nothing (it only counts), so what grows is the client's own.
@Suite struct BoundedPullMemoryTests {
    @Test func tenThousandChangesOfOneKiBPullWithoutTheirBytesStayingResident() async throws {
        try await TestApp.with { server in
            // About 1 KiB of text per post, different in each post.
            let posts = (1...10_000).map { number in
                let text = String(repeating: "line \(number) of a post that is about one kibibyte long. ", count: 17)
                return #"{"id":\#(number),"title":"post \#(number)","body":"\#(text)"}"#
            }
            let payload = posts.reduce(0) { $0 + $1.utf8.count }
            try await server.seed(#"{"posts":[\#(posts.joined(separator: ","))]}"#)

            let outputPath = FileManager.default.temporaryDirectory
                .appendingPathComponent("budget-sync-bench-\(UUID().uuidString.prefix(8)).log").path
            let child = try await ChildProcess.start(
                [
                    try BuiltExecutable.path(of: "budget-sync-bench"), "pull", "--url", server.baseURL.absoluteString,
                    "--page-limit", "100", "--collections", "posts",
                ],
                outputPath: outputPath)
            let status = try await child.waitForExit(timeout: .seconds(180))
            try #require(status == 0, "budget-sync-bench pull exited with \(status):\n\(child.outputTail())")

            // Standard error shares the file; the figures are the one line holding a JSON object.
            let line = try #require(child.output.split(separator: "\n").last { $0.hasPrefix("{") }, "no JSON line:\n\(child.outputTail())")
            let figures = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(figures["changes"] as? Int == 10_000)
            #expect(figures["pages"] as? Int ?? 0 >= 100, "pages of at most 100: \(line)")
            let firstPage = try #require(figures["rssAfterFirstPageKiB"] as? Int, "no RSS figures (not Linux?): \(line)")
            let peak = try #require(figures["peakRSSKiB"] as? Int, "no RSS figures (not Linux?): \(line)")
            let grownBytes = (peak - firstPage) * 1024
            print(
                "bounded pull: \(payload) bytes of posts in \(figures["pages"] ?? "?") pages; client RSS \(firstPage) KiB after "
                    + "the first page, peak \(peak) KiB: +\(grownBytes / 1024) KiB, \(String(format: "%.1f", Double(grownBytes) * 100 / Double(payload))) % "
                    + "of the payload; \(figures["seconds"] ?? "?") s")
            // Holding the records would grow by the payload or more; a client that keeps one page at a time
            // grows by a few pages' worth at most.
            #expect(grownBytes < payload / 3, "the client grew by \(grownBytes) bytes while pulling \(payload) bytes: \(line)")
        }
    }
}
