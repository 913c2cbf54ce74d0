import BudgetCore
import HTTPServer
import Postgres

// How a key gives exactly-once writes (docs/sync.md)
//
// The key's row is stored by the same database transaction as the write it answers for, so the two
// commit together or not at all: a crash after the write cannot lose the key, and a crash before the
// commit leaves nothing behind for the retry to trip over. Inside that transaction:
//
// 1. One statement takes a transaction-scoped advisory lock on the key, without waiting, and reads the
//    key's live row. Lock taken by someone else: the first request is still running (on this or another
//    server process): 409. Row found: replay it, or 422 if the request differs.
// 2. Otherwise the request runs as it would without a key, on the session of this same transaction
//    (`Database.withinTransaction`), and a successful answer is stored before COMMIT. Failures are not
//    stored: nothing was written, so a retry should run again.
//
// The lock is released by COMMIT, after the row became visible, so the next claimant finds the row.

/// Runs requests at most once per idempotency key, replaying the first answer to retries.
struct Idempotency: Sendable {
    static let replayedHeader = "Idempotent-Replayed"

    let purger = PeriodicPurge(statement: IdempotencyQueries.purgeExpired)

    /// `execute`'s answer, run on the session of one transaction with the key's record, or the key's
    /// stored answer.
    func run(
        key: IdempotencyKey, fingerprint: RequestFingerprint, database: Database,
        execute: (Database) async throws -> Response
    ) async throws -> Response {
        try await purger.purgeIfDue(in: database)
        return try await database.withinTransaction(commitIf: { $0.status.isSuccess }) { transaction in
            let claim = try StoredAnswer.Claim(
                try await transaction.query(IdempotencyQueries.claim(key, fingerprint: fingerprint, in: transaction.ledger))[0])
            switch claim {
            case .busy:
                throw IdempotencyError.inProgress(key)
            case .stored(let answer, let matches):
                guard matches else { throw IdempotencyError.reusedForAnotherRequest(key) }
                var response = try answer.response()
                response.headers.replaceOrAdd(Self.replayedHeader, "true")
                return response
            case .free:
                let response = try await execute(transaction)
                guard response.status.isSuccess else { return response }
                let answer = StoredAnswer(response)
                _ = try await transaction.query(
                    IdempotencyQueries.store(
                        key, fingerprint: fingerprint, status: answer.status, headers: answer.headersJSON, body: answer.body,
                        in: transaction.ledger))
                return response
            }
        }
    }
}

/// An answer as the idempotency_keys table keeps it.
struct StoredAnswer {
    let status: Int
    /// `[[name, value], …]`
    let headersJSON: String
    let body: String

    /// What claiming a key found.
    enum Claim {
        /// Another transaction holds the key.
        case busy
        case free
        case stored(StoredAnswer, fingerprintMatches: Bool)

        init(_ row: Row) throws {
            guard try row.decode(Bool.self, at: 0) else { self = .busy; return }
            guard try row.decode(Bool.self, at: 1) else { self = .free; return }
            let answer = StoredAnswer(
                status: Int(try row.decode(Int16.self, at: 3)),
                headersJSON: try row.decode(String.self, at: 4),
                body: try row.decode(String.self, at: 5))
            self = .stored(answer, fingerprintMatches: try row.decode(Bool.self, at: 2))
        }
    }

    init(status: Int, headersJSON: String, body: String) {
        self.status = status
        self.headersJSON = headersJSON
        self.body = body
    }

    init(_ response: Response) {
        status = response.status.code
        let pairs = response.headers.map { JSONValue.array([.string($0.name), .string($0.value)]) }
        headersJSON = JSONWriter.string(.array(pairs))
        // Answers are JSON, so UTF-8; anything else would not survive a text column and is replaced visibly.
        body = String(decoding: response.body, as: UTF8.self)
    }

    func response() throws -> Response {
        var headers = Headers()
        if case .array(let pairs) = try JSONParser.parse(Array(headersJSON.utf8)) {
            for case .array(let pair) in pairs {
                if pair.count == 2, case .string(let name) = pair[0], case .string(let value) = pair[1] {
                    headers.add(name, value)
                }
            }
        }
        return Response(status: Status(code: status), headers: headers, body: Array(body.utf8))
    }
}
