import ArgumentParser
import BudgetSync
import Foundation

/// What every example app takes on its command line: the server, and the store it keeps between runs.
public struct SyncOptions: ParsableArguments {
    @Option(help: "The budget-server to sync with.")
    public var server = "http://127.0.0.1:3000"

    @Option(help: "The local store, kept between runs (default: a file under budget-sync-examples/ in the temporary folder).")
    public var store: String?

    public init() {}

    /// The example's `FileSyncStore` (its default file named after the example) and a client on it that
    /// keeps `collections`.
    public func open(example name: String, collections: [String]) throws -> (SyncClient, FileSyncStore) {
        guard let baseURL = URL(string: server), baseURL.scheme != nil else { throw ValidationError("--server must be a URL") }
        let storeURL = store.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("budget-sync-examples/\(name).json")
        try FileManager.default.createDirectory(at: storeURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        let local = try FileSyncStore(url: storeURL)
        let client = SyncClient(
            configuration: .init(baseURL: baseURL, collections: collections, deviceID: "example-\(name)"), store: local)
        return (client, local)
    }
}

extension Acknowledgement {
    /// `201 POST /posts, Location /posts/4`.
    public var summary: String {
        "\(status) \(operation.method.rawValue) \(operation.path), Location \(headers["location"] ?? "-")"
    }
}
