import Foundation

/// What to do with a queued write the server refused with `412` because the record moved on.
public enum ConflictPolicy: Sendable {
    /// Drop the local write and take the server's current record into the store.
    case serverWins
    /// Send the write again without `ifMatch`, overwriting the server's version.
    case clientWins
    /// Ask the app, which sees both sides.
    case custom(@Sendable (Conflict) async throws -> ConflictResolution)
}

/// A queued write and the server's current version of the record it targeted.
public struct Conflict: Sendable {
    public let operation: PendingOperation
    /// The record as the server has it now, nil if it was deleted.
    public let serverRecord: Record?
    /// The server record's `ETag`, to send as `ifMatch` with a merged write.
    public let serverETag: String?
}

public enum ConflictResolution: Sendable, Hashable {
    /// Drop the local write; the server's record replaces the local one.
    case dropLocal
    /// Send the local write unconditionally.
    case overwrite
    /// Send this write instead (a merge), under the same idempotency key.
    case replace(body: String?, ifMatch: String?)
}

extension SyncClient {
    /// Queues a local write in the durable outbox, under an idempotency key made now and kept until
    /// the server acknowledges it. Pass the `ETag` of the version the app edited as `ifMatch`.
    @discardableResult
    public func enqueue(
        _ method: PendingOperation.Method, _ path: String, body: String? = nil, ifMatch: String? = nil
    ) async throws -> PendingOperation {
        let operation = PendingOperation(
            key: "\(configuration.deviceID)/\(UUID().uuidString.lowercased())", method: method, path: path,
            body: body, ifMatch: ifMatch)
        try await store.appendOperation(operation)
        return operation
    }

    /// Sends the outbox, oldest first, in atomic `POST /batch` requests of at most `batchLimit`
    /// operations, removing each batch once acknowledged. Answers how many operations the server applied.
    ///
    /// An unanswered batch (503, network error, a lost answer) is sent again with the same keys, so
    /// the server replays what it already applied instead of applying it twice. A `412` goes through the
    /// conflict policy; any other refusal stops the push with the outbox intact.
    @discardableResult
    public func push() async throws -> Int {
        var applied = 0
        var batchLimit = max(1, configuration.batchLimit)
        while true {
            let pending = try await store.pendingOperations()
            guard !pending.isEmpty else { return applied }
            let batch = Array(pending.prefix(batchLimit))
            let answer = try await sendRetrying("POST", "/batch", body: try Self.batchBody(batch))
            switch answer.status {
            case 200:
                let replayed = try Self.replayedCount(answer.body)
                try await store.removeOperations(withKeys: Set(batch.map(\.key)))
                applied += batch.count
                eventSink.yield(.pushed(operations: batch.count, replayed: replayed))
            case 412:
                // The atomic batch rolled back entirely; `operation` names the write that lost.
                guard let index = Problem(answer.body).operation, batch.indices.contains(index) else {
                    throw SyncError.malformedAnswer("a 412 batch answer without a valid operation index")
                }
                try await resolveConflict(batch[index])
            case 413 where batchLimit > 1:
                // The server's --batch-limit is lower than configured: halve until it fits.
                batchLimit = max(1, batch.count / 2)
            default:
                let problem = Problem(answer.body)
                throw SyncError.rejected(status: answer.status, operation: problem.operation, problem: problem.summary)
            }
        }
    }

    private func resolveConflict(_ operation: PendingOperation) async throws {
        var current: (record: Record, etag: String?)?
        if let target = operation.target { current = try await fetch(collection: target.collection, id: target.id) }
        let resolution: ConflictResolution
        switch configuration.conflictPolicy {
        case .serverWins: resolution = .dropLocal
        case .clientWins: resolution = .overwrite
        case .custom(let decide):
            resolution = try await decide(Conflict(operation: operation, serverRecord: current?.record, serverETag: current?.etag))
        }
        eventSink.yield(.conflict(key: operation.key, resolution: resolution))
        switch resolution {
        case .dropLocal:
            if let target = operation.target {
                let kind: Change.Kind = if let current { .upsert(current.record) } else { .delete }
                try await store.apply([Change(collection: target.collection, id: target.id, kind: kind, seq: nil, version: nil)], cursor: nil)
            }
            try await store.removeOperations(withKeys: [operation.key])
        case .overwrite:
            var unconditional = operation
            unconditional.ifMatch = nil
            try await store.updateOperation(unconditional)
        case .replace(let body, let ifMatch):
            var merged = operation
            merged.body = body
            merged.ifMatch = ifMatch
            try await store.updateOperation(merged)
        }
    }

    /// `{"atomic":true,"operations":[…]}` with each body spliced in as the app's own JSON text.
    static func batchBody(_ batch: [PendingOperation]) throws -> Data {
        let encoder = JSONEncoder()
        func quoted(_ text: String) throws -> String { String(decoding: try encoder.encode(text), as: UTF8.self) }
        var operations: [String] = []
        for operation in batch {
            var members = [#""method":\#(try quoted(operation.method.rawValue))"#, #""path":\#(try quoted(operation.path))"#]
            if let body = operation.body { members.append(#""body":\#(body)"#) }
            members.append(#""idempotencyKey":\#(try quoted(operation.key))"#)
            if let ifMatch = operation.ifMatch { members.append(#""ifMatch":\#(try quoted(ifMatch))"#) }
            operations.append("{" + members.joined(separator: ",") + "}")
        }
        return Data(#"{"atomic":true,"operations":[\#(operations.joined(separator: ","))]}"#.utf8)
    }

    /// How many of a batch answer's results carry `Idempotent-Replayed: true`.
    static func replayedCount(_ body: Data) throws -> Int {
        guard let object = try JSONSerialization.jsonObject(with: body) as? [String: Any],
              let results = object["results"] as? [[String: Any]]
        else { throw SyncError.malformedAnswer("a batch answer without results") }
        return results.filter { (($0["headers"] as? [String: Any])?["Idempotent-Replayed"] as? String) == "true" }.count
    }
}
