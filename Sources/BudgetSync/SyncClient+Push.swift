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

/// What to do with a queued write the server refused for good: a `422` (the record is invalid), a
/// `404` (its target was deleted), a `400`. Sending it again unchanged would be refused again.
public enum RejectionPolicy: Sendable {
    /// Stop the push with `SyncError.rejected`, the outbox untouched: the app fixes or removes the write
    /// (`SyncStore.removeOperations`) and pushes again. Nothing the app queued is dropped behind its back.
    case stop
    /// Hand the refused write to the closure (to show it, or keep it aside), then remove it from the outbox
    /// and push the rest. If the closure throws, the push stops with that error and the write stays queued.
    case setAside(@Sendable (Rejection) async throws -> Void)
}

/// A queued write the server refused, with the problem it answered (RFC 9457).
public struct Rejection: Sendable {
    public let operation: PendingOperation
    public let status: Int
    /// The problem's title and detail.
    public let problem: String
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
        try await enqueue(method, path, body: body, ifMatch: ifMatch, baseVersion: nil)
    }

    /// Queues an edit (`PUT`, `PATCH`, `DELETE`) of `record` as the app holds it, conditional on that
    /// version: its `ETag` as `ifMatch`, and its `version`, so a change of derived members alone (a
    /// category's `spent`) is not taken for a conflict.
    @discardableResult
    public func enqueue(_ method: PendingOperation.Method, editing record: Record, body: String? = nil) async throws -> PendingOperation {
        try await enqueue(method, record.path, body: body, ifMatch: record.etag, baseVersion: record.version)
    }

    private func enqueue(
        _ method: PendingOperation.Method, _ path: String, body: String?, ifMatch: String?, baseVersion: Int?
    ) async throws -> PendingOperation {
        let operation = PendingOperation(
            key: "\(configuration.deviceID)/\(UUID().uuidString.lowercased())", method: method, path: path,
            body: body, ifMatch: ifMatch, baseVersion: baseVersion)
        try await store.appendOperation(operation)
        return operation
    }

    /// Sends the outbox, oldest first, in atomic `POST /batch` requests of at most `batchLimit`
    /// operations, removing each batch once acknowledged. Answers what the server acknowledged, in
    /// order: a create's new id and `Location` are there, for the app to match with its local draft.
    ///
    /// An unanswered batch (503, network error, a lost answer) is sent again with the same keys, so
    /// the server replays what it already applied instead of applying it twice. A `412` goes through the
    /// conflict policy, any other refusal of one write through the rejection policy. The acknowledged
    /// records are not written to the store: the next `pull` brings them, in feed order, so a push
    /// never puts an older version over a newer one the feed already delivered.
    @discardableResult
    public func push() async throws -> [Acknowledgement] {
        var acknowledged: [Acknowledgement] = []
        var batchLimit = max(1, configuration.batchLimit)
        while true {
            let pending = try await store.pendingOperations()
            guard !pending.isEmpty else { return acknowledged }
            let batch = Array(pending.prefix(batchLimit))
            let answer = try await sendRetrying("POST", "/batch", body: try Self.batchBody(batch))
            switch answer.status {
            case 200:
                let results = try Acknowledgement.parsing(answer.body, of: batch)
                try await store.removeOperations(withKeys: Set(batch.map(\.key)))
                acknowledged += results
                eventSink.yield(.pushed(operations: batch.count, replayed: results.filter(\.isReplay).count))
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
                // The atomic batch rolled back; a refusal that names one operation is that write's alone. A
                // timeout or "too many requests" is no verdict on the write: those stop the push, queue intact.
                let problem = Problem(answer.body)
                guard (400..<500).contains(answer.status), ![408, 425, 429].contains(answer.status),
                    case .setAside(let setAside) = configuration.rejectionPolicy,
                    let index = problem.operation, batch.indices.contains(index)
                else { throw SyncError.rejected(status: answer.status, operation: problem.operation, problem: problem.summary) }
                try await setAside(Rejection(operation: batch[index], status: answer.status, problem: problem.summary))
                try await store.removeOperations(withKeys: [batch[index].key])
                eventSink.yield(.rejected(key: batch[index].key, status: answer.status))
            }
        }
    }

    private func resolveConflict(_ operation: PendingOperation) async throws {
        var current: (record: Record, etag: String?)?
        if let target = operation.target { current = try await fetch(collection: target.collection, id: target.id) }
        // The record's own writes did not move (same version): only derived members changed its ETag.
        if let base = operation.baseVersion, let current, current.record.version == base, current.etag != operation.ifMatch {
            var retagged = operation
            retagged.ifMatch = current.etag
            try await store.updateOperation(retagged)
            return
        }
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
            if let target = operation.target { try await refresh(collection: target.collection, id: target.id) }
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
}

/// A queued write the server applied, and what it answered for it inside the batch (docs/sync.md, Batch).
public struct Acknowledgement: Sendable, Hashable {
    public let operation: PendingOperation
    /// `201` for a create, `200` for an update, `204` for a delete.
    public let status: Int
    /// The operation's answer headers (`Location`, `ETag`), names in lower case.
    public let headers: [String: String]
    /// The record the server answered, exactly as sent; nil for a `204`.
    public let record: Record?
    /// The server had applied this write before (its answer was lost) and sent the stored answer again.
    public let isReplay: Bool

    /// Reads a `200` batch answer, `{"atomic":true,"results":[…]}`, one result per operation in order.
    static func parsing(_ body: Data, of batch: [PendingOperation]) throws -> [Acknowledgement] {
        let bytes = [UInt8](body)
        guard let resultsRange = try JSONScanner.members(of: bytes, in: bytes.indices)["results"] else {
            throw SyncError.malformedAnswer("a batch answer without results")
        }
        let results = try JSONScanner.elements(of: bytes, in: resultsRange)
        guard results.count == batch.count else {
            throw SyncError.malformedAnswer("a batch answer with \(results.count) results for \(batch.count) operations")
        }
        return try zip(batch, results).map { operation, range in
            let members = try JSONScanner.members(of: bytes, in: range)
            guard let status = members["status"].flatMap({ JSONScanner.integer(in: bytes, at: $0) }) else {
                throw SyncError.malformedAnswer("a batch result without status")
            }
            var headers: [String: String] = [:]
            if let headersRange = members["headers"] {
                for (name, valueRange) in try JSONScanner.members(of: bytes, in: headersRange) {
                    headers[name.lowercased()] = try JSONScanner.string(in: bytes, at: valueRange)
                }
            }
            var record: Record?
            if let bodyRange = members["body"], bytes[bodyRange.lowerBound] == UInt8(ascii: "{") {
                // A create names its record's home in Location (`/transactions/7` for a POST to
                // `/categories/1/transactions`); other writes name it in their own path.
                let home = headers["location"] ?? operation.path
                let collection = home.split(separator: "/").first.map(String.init) ?? ""
                // A singular json-server resource (`/profile`) has no id, so no record to name.
                record = try? Record(collection: collection, json: Data(bytes[bodyRange]), etag: headers["etag"])
            }
            return Acknowledgement(
                operation: operation, status: status, headers: headers, record: record,
                isReplay: headers["idempotent-replayed"] == "true")
        }
    }
}
