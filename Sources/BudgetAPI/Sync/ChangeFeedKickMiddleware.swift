import HTTPServer
import Postgres

/// Asks this process's sequencer to stamp the changes of a write that just succeeded, so they reach the
/// change feed within about one commit instead of at the next sweep (docs/change-feed.md).
///
/// The kick comes after the answer, so after the commit: a kick before it would find nothing to stamp yet.
/// It never waits, and kicks that arrive while a run is going fold into one more run.
struct ChangeFeedKickMiddleware: Middleware {
    let sequencer: BackgroundDrain

    func respond(to request: Request, next: any Handler) async throws -> Response {
        let response = try await next.respond(to: request)
        if response.status.isSuccess, !request.method.isSafe { sequencer.kick() }
        return response
    }
}
