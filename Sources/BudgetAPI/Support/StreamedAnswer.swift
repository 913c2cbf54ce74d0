import HTTPServer
import Postgres

/// Where and how answers too large to hold in memory are made: lists and `GET /db` (docs/api.md, Large answers).
struct StreamSettings: Sendable {
    /// An answer up to this size is held whole and sent with `Content-Length` and a strong `ETag`, exactly as
    /// any other answer; a larger one leaves in chunks as its rows arrive, with a weak `ETag`.
    static let bufferedBytes = 256 * 1024

    /// The connections streamed answers read from, a pool of their own: a client that reads slowly holds one
    /// of these for as long as it reads, never one that writes and transactions need (`--stream-pool-size`).
    let pool: ConnectionPool
    /// `--max-rows`: the most records one list answers; nil for no cap.
    let maxRows: Int?
}

/// A body made piece by piece on one blocking connection, inside the transaction `Database.streamedAnswer`
/// holds open for it.
///
/// Implementations are used by one job at a time, each job after the previous one has ended (a reserved
/// connection runs them in order), which is what makes their `@unchecked Sendable` safe.
protocol ChunkSource: AnyObject, Sendable {
    /// The next piece of the body; nil once it is complete.
    func next(on connection: Connection) throws -> [UInt8]?
}

/// How a streamed answer begins, decided on its connection inside its transaction.
enum StreamedStart: Sendable {
    /// The whole answer: a 304, a singular resource, an error's answer.
    case answer(Response)
    /// The status and headers of the answer, and where its body comes from; `weakTag` becomes its `ETag` if the
    /// body turns out larger than `StreamSettings.bufferedBytes`.
    case body(Response, weakTag: EntityTag?, source: any ChunkSource)
}

extension Database {
    /// An answer whose body may be too large to hold, read in one snapshot.
    ///
    /// `start` runs on a connection of the stream pool inside a `REPEATABLE READ READ ONLY` transaction, so its
    /// headers (`X-Total-Count`, `X-Sync-Seq`) and every row come from one snapshot. In the same job the body's
    /// first pieces are made, up to `StreamSettings.bufferedBytes`: a body that ends there is answered whole,
    /// as any other answer, and the connection goes back at once. A longer one is answered with what was made
    /// and a `BodyStream` for the rest, which holds the connection and its transaction until the last piece
    /// (then COMMIT) or until the client goes away (then ROLLBACK): one job, so one hand-off, per piece.
    ///
    /// Inside a transaction (`withinTransaction`: a precondition reading a list) the whole body is made at once
    /// on that transaction's connection.
    func streamedAnswer(_ start: @escaping @Sendable (Connection) throws -> StreamedStart) async throws -> Response {
        if isInTransaction {
            return try await run { connection in
                switch try start(connection) {
                case .answer(let response):
                    return response
                case .body(var response, _, let source):
                    while let piece = try source.next(on: connection) { response.body += piece }
                    return response
                }
            }
        }
        let reserved = try await streams.pool.reserve()
        let first: Response
        do {
            first = try await reserved.withConnection { connection in
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                switch try start(connection) {
                case .answer(let response):
                    try connection.execute("COMMIT")
                    return response
                case .body(var response, let weakTag, let source):
                    while response.body.count < StreamSettings.bufferedBytes {
                        guard let piece = try source.next(on: connection) else {
                            try connection.execute("COMMIT")
                            return response
                        }
                        response.body += piece
                    }
                    if let weakTag { response.headers.replaceOrAdd("ETag", weakTag.headerValue) }
                    response.stream = ReservedBodyStream(reserved: reserved, source: source)
                    return response
                }
            }
        } catch {
            reserved.release()
            throw error
        }
        if first.stream == nil { reserved.release() }
        return first
    }
}

/// The rest of a streamed answer's body: one job per piece on the reserved connection that made its first
/// pieces, in the transaction still open there. The last piece commits; `close` releases the connection,
/// whose worker rolls back a transaction left open (a client that went away, a piece that failed).
///
/// `@unchecked Sendable`: `isComplete` is touched only by the request's task (the server calls `next` and
/// `close` one at a time, on its event loop), and `source` only inside the reserved connection's jobs.
private final class ReservedBodyStream: BodyStream, @unchecked Sendable {
    private let reserved: ReservedConnection
    private let source: any ChunkSource
    private var isComplete = false

    init(reserved: ReservedConnection, source: any ChunkSource) {
        self.reserved = reserved
        self.source = source
    }

    deinit {
        // The server closes every stream it was given; this covers an answer dropped before it reached it.
        reserved.release()
    }

    func next() async throws -> [UInt8]? {
        guard !isComplete else { return nil }
        let source = self.source
        let piece = try await reserved.withConnection { connection in
            guard let piece = try source.next(on: connection) else {
                try connection.execute("COMMIT")
                return nil as [UInt8]?
            }
            return piece
        }
        // A client that left while the piece was made gets no more pieces made for it.
        try Task.checkCancellation()
        if piece == nil { isComplete = true }
        return piece
    }

    func close() {
        reserved.release()
    }
}
