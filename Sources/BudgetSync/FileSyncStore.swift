import Foundation

/// A `SyncStore` in one JSON file, rewritten whole and atomically on every change.
///
/// Meant for tests, examples and small command-line tools: every write rewrites the file, so it
/// suits thousands of records, not millions. Records keep their exact JSON text.
public actor FileSyncStore: SyncStore {
    private struct State: Codable {
        var cursor: Int?
        /// collection → id → the record.
        var records: [String: [String: StoredRecord]] = [:]
        var outbox: [PendingOperation] = []
    }

    /// A record's JSON as text (readable in the file) and its `ETag`.
    private struct StoredRecord: Codable {
        var json: String
        var etag: String?

        init(_ record: Record) {
            json = String(decoding: record.json, as: UTF8.self)
            etag = record.etag
        }
    }

    public nonisolated let url: URL
    private var state: State

    /// Opens the store at `url`, or starts an empty one if the file does not exist.
    public init(url: URL) throws {
        self.url = url
        if FileManager.default.fileExists(atPath: url.path) {
            state = try JSONDecoder().decode(State.self, from: Data(contentsOf: url))
        } else {
            state = State()
        }
    }

    public func cursor() -> Int? { state.cursor }

    public func apply(_ changes: [Change], cursor: Int?) throws {
        var next = state
        for change in changes {
            switch change.kind {
            case .upsert(let record): next.records[change.collection, default: [:]][change.id] = StoredRecord(record)
            case .delete: next.records[change.collection]?[change.id] = nil
            }
        }
        if let cursor { next.cursor = cursor }
        try save(next)
    }

    public func replaceAll(with records: [Record], cursor: Int) throws {
        var next = state
        next.records = [:]
        for record in records { next.records[record.collection, default: [:]][record.id] = StoredRecord(record) }
        next.cursor = cursor
        try save(next)
    }

    public func pendingOperations() -> [PendingOperation] { state.outbox }

    public func appendOperation(_ operation: PendingOperation) throws {
        var next = state
        next.outbox.append(operation)
        try save(next)
    }

    public func updateOperation(_ operation: PendingOperation) throws {
        var next = state
        guard let index = next.outbox.firstIndex(where: { $0.key == operation.key }) else { return }
        next.outbox[index] = operation
        try save(next)
    }

    public func removeOperations(withKeys keys: Set<String>) throws {
        var next = state
        next.outbox.removeAll { keys.contains($0.key) }
        try save(next)
    }

    /// Every record of `collection`, by id.
    public func records(in collection: String) -> [String: Record] {
        (state.records[collection] ?? [:]).reduce(into: [:]) { result, entry in
            result[entry.key] = Record(collection: collection, id: entry.key, json: Data(entry.value.json.utf8), etag: entry.value.etag)
        }
    }

    /// Writes a record locally, as an app shows its own edit before the server has it.
    public func putLocal(_ record: Record) throws {
        try apply([Change(collection: record.collection, id: record.id, kind: .upsert(record), seq: nil, version: nil)], cursor: nil)
    }

    /// Writes the new state to a temporary file beside the store, flushes it, and renames it over the
    /// store: rename(2) replaces the file atomically, so a crash leaves the old state or the new one.
    private func save(_ next: State) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(next)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
            guard rename(temporary.path, url.path) == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        state = next
    }
}
