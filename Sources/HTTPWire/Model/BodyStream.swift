/// The rest of a response body, produced piece by piece while the connection sends it: an answer too
/// large to hold in memory (a list of a hundred thousand records) leaves as its pieces are made.
///
/// A `Response` whose `stream` is set goes out with HTTP/1.1 chunked transfer coding (RFC 9112 §7.1): its
/// `body` first, then every piece `next()` answers, one chunk each, then the last chunk. To an HTTP/1.0
/// client, which cannot read chunks (RFC 9112 §6.1), it goes out undelimited and the connection closes after it.
///
/// The contract between the server and a stream:
/// - `next()` is called on the request's event loop, one call at a time, and only once the previous piece
///   has left the server's buffer for the kernel's: a client that reads slowly holds the producer back, so
///   it costs one piece of memory, not the whole body.
/// - A `next()` that throws ends the answer without its last chunk, and the connection closes: the client
///   sees an incomplete body, never a complete but short one (RFC 9112 §7.1, §8). The error is logged.
/// - When the client goes away, the request's task is cancelled; a `next()` under way should end soon
///   (throwing `CancellationError` is fine), and no further one follows.
/// - `close()` is called exactly once, after the last `next()` or instead of any (a `HEAD`, a `304`, a client
///   that left before the head was sent), whatever happened: it releases what the stream holds. Whoever
///   replaces a response that carries a stream with another answer (a middleware answering 304) closes it.
public protocol BodyStream: AnyObject, Sendable {
    /// The next piece of the body; nil once the body is complete. An empty piece is skipped.
    func next() async throws -> [UInt8]?

    /// The server will not call `next()` again; release the producer's resources.
    func close()
}
