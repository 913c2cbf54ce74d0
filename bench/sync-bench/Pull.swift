import ArgumentParser
import BudgetSync
import Foundation

/// `budget-sync-bench pull`: the whole change feed from cursor 0, through a `SyncClient`, into a store
/// that keeps nothing but counts. The rate is then the protocol's and the client's (requests, reading the
/// pages), not that of whichever database an app would store the records in.
struct Pull: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pull the whole change feed from cursor 0; print changes, pages, seconds, rate and RSS as one JSON line.",
        discussion: """
            rssAfterFirstPageKiB is VmRSS once the first page was applied, peakRSSKiB is VmHWM at the end \
            (both null where /proc/self/status does not exist): the difference is what the rest of the pull \
            added to the client's memory.
            """
    )

    @Option(help: "The server's base URL, such as http://127.0.0.1:3000.")
    var url: String

    @Option(help: "Changes asked for per /changes page (the server allows 1...1000).")
    var pageLimit = 1000

    @Option(help: "Comma-separated collections a resync (410) reloads.")
    var collections = "categories,transactions"

    func validate() throws {
        guard (1...1000).contains(pageLimit) else { throw ValidationError("--page-limit must be 1...1000") }
        _ = try serverURL(url)
    }

    func run() async throws {
        var configuration = SyncClient.Configuration(
            baseURL: try serverURL(url), collections: collections.split(separator: ",").map(String.init), deviceID: "sync-bench")
        configuration.pageLimit = pageLimit
        let store = CountingStore()
        let client = SyncClient(configuration: configuration, store: store)

        let clock = ContinuousClock()
        let started = clock.now
        try await client.pull()
        let elapsed = seconds(clock.now - started)
        let peak = ResidentMemory.peakKiB()

        let counts = await store.counts
        var line = JSONLine()
        line.add("changes", counts.changes)
        line.add("pages", counts.pages)
        line.add("seconds", elapsed, decimals: 3)
        line.add("changesPerSecond", Double(counts.changes) / elapsed, decimals: 0)
        line.add("rssAfterFirstPageKiB", counts.rssAfterFirstPageKiB)
        line.add("peakRSSKiB", peak)
        line.write()
    }
}

/// A `SyncStore` that keeps the cursor and counts what it is handed, and stores no record.
actor CountingStore: SyncStore {
    private var position: Int?
    private var changes = 0
    private var pages = 0
    /// VmRSS right after the first page: the client with everything set up and one page in hand, the
    /// baseline for what the following pages add.
    private var rssAfterFirstPageKiB: Int?

    var counts: (changes: Int, pages: Int, rssAfterFirstPageKiB: Int?) { (changes, pages, rssAfterFirstPageKiB) }

    func cursor() -> Int? { position }

    func apply(_ changes: [Change], cursor: Int?) {
        pages += 1
        self.changes += changes.count
        if pages == 1 { rssAfterFirstPageKiB = ResidentMemory.currentKiB() }
        if let cursor { position = cursor }
    }

    /// A resync (`410`) hands over every record of the lists; a pull from cursor 0 never gets one, but the
    /// records would count as received all the same.
    func replaceAll(with records: [Record], cursor: Int) {
        changes += records.count
        position = cursor
    }

    // Nothing is ever queued: this store only pulls.
    func pendingOperations() -> [PendingOperation] { [] }
    func appendOperation(_ operation: PendingOperation) {}
    func updateOperation(_ operation: PendingOperation) {}
    func removeOperations(withKeys keys: Set<String>) {}
}
