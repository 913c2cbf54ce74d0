import HTTPServer
import Postgres

/// `If-Match` and `If-None-Match` on `PUT`, `PATCH` and `DELETE` (RFC 9110 §13; docs/sync.md): a write
/// based on a representation the client no longer has the latest of answers 412 and changes nothing.
///
/// The current representation is what the route's own `GET` answers, tagged as `EntityTagMiddleware` tags
/// it, so any ETag a client was given can be checked, for every resource. The check and the write share
/// one REPEATABLE READ transaction (`Database.withinTransaction`): when another write changes the record
/// between them, the write fails with a serialization error and the whole request runs again, now seeing
/// the other write, so of two updates sent with the same `If-Match` exactly one succeeds.
struct Preconditions: Sendable {
    static let methods: Set<Method> = [.put, .patch, .delete]

    /// The headers that are part of a representation's tag (see `EntityTag.strong`).
    let representationHeaders: [String]

    /// `write` behind the request's preconditions, judged against what `read` (the same route's GET)
    /// answers in the write's transaction.
    func wrapping(_ write: @escaping RouteHandler, read: @escaping RouteHandler) -> RouteHandler {
        { request, database in
            let advice = BudgetApp.percentEncodingAdvice
            let ifMatch = try request.entityTagCondition("If-Match", percentEncodingAdvice: advice)
            let ifNoneMatch = try request.entityTagCondition("If-None-Match", percentEncodingAdvice: advice)
            guard ifMatch != nil || ifNoneMatch != nil else { return try await write(request, database) }
            return try await database.withinTransaction(commitIf: { $0.status.isSuccess }) { transaction in
                let current = try await currentTag(of: request, read: read, database: transaction)
                // RFC 9110 §13.1: preconditions count only where the request would otherwise succeed; a PATCH
                // or DELETE of a missing record answers its 404, while a PUT would create it, so there they count.
                if current == nil && request.method != .put { return try await write(request, transaction) }
                // RFC 9110 §13.2.2: If-Match first; If-None-Match on a write fails when the record exists (`*`) or matches.
                if let ifMatch, !ifMatch.matchesStrongly(current) {
                    throw PreconditionError.stale(header: "If-Match", current: current)
                }
                if let ifNoneMatch, ifNoneMatch.matchesWeakly(current) {
                    throw PreconditionError.stale(header: "If-None-Match", current: current)
                }
                return try await write(request, transaction)
            }
        }
    }

    /// The tag of what `GET` on the request's path answers now; nil when there is no such record. A path
    /// the GET refuses otherwise (a malformed id, say) is refused the same way for the write.
    private func currentTag(of request: Request, read: RouteHandler, database: Database) async throws -> EntityTag? {
        var probe = Request(method: .get, target: request.path)
        probe.id = request.id
        probe.route = request.route
        probe.parameters = request.parameters
        do {
            let current = try await read(probe, database)
            return current.status == .ok ? EntityTag.strong(for: current, including: representationHeaders) : nil
        } catch let error as any ProblemConvertible where error.problem.status == .notFound {
            return nil
        }
    }
}

/// A precondition that did not hold.
enum PreconditionError: ProblemConvertible {
    case stale(header: String, current: EntityTag?)

    var problem: Problem {
        switch self {
        case .stale(let header, let current):
            let state = current.map { "its current ETag is \($0.headerValue)" } ?? "it does not exist"
            var problem = Problem(
                .preconditionFailed,
                detail: "\(header) does not hold for this resource: \(state); nothing was changed. "
                    + "Fetch it again, reapply your change and retry",
                errors: [.init(field: header, message: "precondition failed")])
            if let current { problem.headers.add("ETag", current.headerValue) }
            return problem
        }
    }
}
