import HTTPServer
import Postgres

/// The weak `ETag` of a list too large to hold, made from what decides its content instead of its bytes, which
/// are not all there before the first one leaves (docs/sync.md, Validators of large answers).
///
/// Two answers with the same tag have the same content: the tag hashes the request's normalised list query
/// (the path and the parsed query language, not its spelling), the server's settings that shape the answer,
/// the shape's own version, and the data version (`ChangeFeedQueries.dataVersion`), read in the answer's own
/// snapshot.
enum ListValidator {
    /// Changes whenever what changes list answers changes: bump it with the rendering of records or lists, so
    /// a tag from an older server never matches an answer of a newer one.
    static let representation = "lists-1"

    /// The weak tag of `identity`'s answer at data version `version`.
    static func tag(identity: [String], version: String) -> EntityTag {
        EntityTag.weak(identifying: [representation] + identity + [version])
    }

    /// Whether `condition` (`If-None-Match`) names `tag` (weak comparison, RFC 9110 §13.1.2), so the answer
    /// can be a 304 before any record is read. `*` is left to `EntityTagMiddleware`, which judges it on the
    /// answer, as for any other.
    static func isNotModified(_ condition: EntityTagCondition?, tag: EntityTag) -> Bool {
        guard let condition, case .tags = condition else { return false }
        return condition.matchesWeakly(tag)
    }

    /// RFC 9110 §15.4.5: the 304 keeps the headers the 200 would have had, with its `ETag`, and no content.
    static func notModified(_ head: Response, tag: EntityTag) -> Response {
        var response = head
        response.status = .notModified
        response.headers.remove("Content-Type")
        response.headers.replaceOrAdd("ETag", tag.headerValue)
        return response
    }
}
