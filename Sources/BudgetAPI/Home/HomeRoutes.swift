import HTTPServer

/// `GET /`: a page for people, as json-server has one, listing what this server holds (docs/json-server.md).
///
/// `--no-home` leaves it out, and `/` is then a 404 like any unknown path. HEAD, ETags and 304 come from the
/// pipeline, as for every GET.
struct HomeRoutes: Sendable {
    static let contentType = "text/html; charset=utf-8"

    /// Which month the budgets show: the current one.
    let clock: CivilClock

    func register(in router: inout Router<Database>) {
        router.get("/") { _, database in
            let page = try HomeQueries.decode(try await database.query(HomeQueries.page(clock: clock, ledger: database.ledger)))
            return Response(status: .ok, headers: ["Content-Type": Self.contentType], body: page.render())
        }
    }
}
