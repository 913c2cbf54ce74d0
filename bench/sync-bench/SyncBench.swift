import ArgumentParser
import Foundation

/// `budget-sync-bench`: BudgetSync's own figures against a running budget-server, for bench/sync
/// (bench/README.md). Each subcommand prints one JSON object on one line of standard output.
@main
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "budget-sync-bench",
        abstract: "Measure BudgetSync's pull and push against a running budget-server.",
        subcommands: [Pull.self, Push.self]
    )
}

/// The `--url` option, checked: a scheme and a host, as `SyncClient` appends paths to it.
func serverURL(_ text: String) throws -> URL {
    guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
        throw ValidationError("--url must be a server's base URL, such as http://127.0.0.1:3000 (got \(text))")
    }
    return url
}

/// Seconds as a `Double`, for rates.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// One JSON object written as one line, its members in the order they were added, so a person reading
/// bench/sync's log sees them as documented (a program reading the line does not care).
struct JSONLine {
    private var members: [String] = []

    mutating func add(_ name: String, _ value: Int?) {
        members.append("\"\(name)\":\(value.map(String.init) ?? "null")")
    }

    /// A figure rounded to `decimals`; one that is not finite (nothing was measured) is `null`.
    mutating func add(_ name: String, _ value: Double, decimals: Int) {
        members.append("\"\(name)\":\(value.isFinite ? String(format: "%.\(decimals)f", value) : "null")")
    }

    func write() {
        FileHandle.standardOutput.write(Data(("{" + members.joined(separator: ",") + "}\n").utf8))
    }
}

/// The process's resident memory, from /proc/self/status; nil where there is no such file (not Linux).
enum ResidentMemory {
    /// `VmRSS`: resident now, in KiB.
    static func currentKiB() -> Int? { statusField("VmRSS") }

    /// `VmHWM`: the most that was ever resident at once since the process started, in KiB.
    static func peakKiB() -> Int? { statusField("VmHWM") }

    private static func statusField(_ name: String) -> Int? {
        #if os(Linux)
        // Read with read(2) to the end: files under /proc report a size of 0, which makes Foundation's
        // whole-file readers read nothing.
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        // A line such as "VmRSS:\t   12345 kB".
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        }
        return nil
        #else
        return nil
        #endif
    }
}
