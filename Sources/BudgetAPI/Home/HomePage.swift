import BudgetCore

/// What `GET /` shows (docs/json-server.md, Home page): every resource with its record count and link, a
/// bar of each category's spending this month, and the server's own endpoints. `render()` is a pure function
/// of it.
struct HomePage: Sendable {
    struct Resource: Sendable {
        enum Kind: Sendable { case typed, plural, singular }
        var name: String
        var kind: Kind
        /// Records in a plural collection; a singular resource holds its one object.
        var records: Int64
    }

    /// A category's month as `GET /categories/:id?month=current` answers it: `budgeted`, `carried`, `spent`
    /// and `remaining`, exact.
    struct Budget: Sendable {
        var id: Int64
        var title: String
        var budgeted: Money
        var carried: Money
        var spent: Money
        var remaining: Money

        /// How much of what the month has (its budget and what it carried) is spent, in tenths of a percent
        /// from 0 to 1000, for the bar's width.
        ///
        /// Integer cents, never a float: refunds beyond spending draw an empty bar, spending over what the
        /// month has (or anything spent when it has nothing) a full one.
        var spentPermille: Int64 {
            let spent = spent.cents
            guard spent > 0 else { return 0 }
            let available = budgeted.cents + carried.cents
            guard spent < available else { return 1000 }
            // spent < available, both far inside Int64 (numeric(14,2) sums over 120 months at most), so
            // spent × 1000 stays inside it too.
            return spent * 1000 / available
        }

        var isOverspent: Bool { remaining < .zero }
        var hasCarry: Bool { carried != .zero }
    }

    var resources: [Resource] = []
    /// The month the budgets show, `YYYY-MM`: the current one in the server's time zone.
    var month = ""
    /// The first `HomeQueries.budgetLimit` categories by id.
    var budgets: [Budget] = []

    /// The server's own endpoints the page links to, with what each is.
    static let endpoints: [(path: String, about: String)] = [
        ("openapi.yaml", "the API contract, OpenAPI 3.1"),
        ("changes", "the change feed that offline clients follow"),
        ("db", "the whole database as one db.json"),
        ("health", "liveness"),
        ("metrics", "Prometheus metrics"),
    ]

    private var categoryCount: Int64 {
        resources.first { $0.kind == .typed && $0.name == Categories.collection }?.records ?? Int64(budgets.count)
    }

    /// The page as UTF-8 HTML, every name and title escaped.
    func render() -> [UInt8] {
        var html = HTMLText(capacity: 4096 + 256 * (resources.count + budgets.count))
        html.markup(
            """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>budget-server</title>
            <style>\(Self.style)</style>
            </head><body><main>
            <h1>budget-server</h1>
            <p class="lead">Budget categories and transactions, and json-server collections, in PostgreSQL.</p>

            """)
        renderResources(into: &html)
        renderBudgets(into: &html)
        html.markup("<h2>Endpoints</h2>\n<ul class=\"endpoints\">\n")
        for endpoint in Self.endpoints {
            html.markup("<li><a href=\"")
            html.href(endpoint.path)
            html.markup("\">/")
            html.text(endpoint.path)
            html.markup("</a> <span>")
            html.text(endpoint.about)
            html.markup("</span></li>\n")
        }
        html.markup("</ul>\n</main></body></html>\n")
        return html.bytes
    }

    private func renderResources(into html: inout HTMLText) {
        html.markup("<h2>Resources</h2>\n<table class=\"resources\">\n")
        html.markup("<thead><tr><th>Resource</th><th>Kind</th><th class=\"count\">Records</th></tr></thead>\n<tbody>\n")
        for resource in resources {
            html.markup("<tr><td><a href=\"")
            html.href(resource.name)
            html.markup("\">/")
            html.text(resource.name)
            switch resource.kind {
            case .typed: html.markup("</a></td><td>typed</td><td class=\"count\">")
            case .plural: html.markup("</a></td><td>collection</td><td class=\"count\">")
            case .singular: html.markup("</a></td><td>singular</td><td class=\"count\">")
            }
            html.markup(resource.kind == .singular ? "object" : String(resource.records))
            html.markup("</td></tr>\n")
        }
        html.markup("</tbody></table>\n")
    }

    private func renderBudgets(into html: inout HTMLText) {
        html.markup("<h2>Budgets for \(Self.monthName(month))</h2>\n")
        guard !budgets.isEmpty else {
            html.markup("<p class=\"empty\">No categories yet.</p>\n")
            return
        }
        html.markup("<ul class=\"budgets\">\n")
        for budget in budgets {
            let permille = budget.spentPermille
            html.markup("<li class=\"\(budget.isOverspent ? "budget over" : "budget")\" data-id=\"\(budget.id)\"")
            html.markup(" data-budgeted=\"\(budget.budgeted)\" data-carried=\"\(budget.carried)\"")
            html.markup(" data-spent=\"\(budget.spent)\" data-remaining=\"\(budget.remaining)\">")
            html.markup("<div class=\"line\"><a href=\"")
            html.href(Categories.collection, String(budget.id))
            html.markup("\">")
            html.text(budget.title)
            html.markup("</a><span class=\"figures\">\(budget.spent) of \(budget.budgeted) spent, ")
            if budget.hasCarry { html.markup("\(budget.carried) carried, ") }
            html.markup(budget.isOverspent ? "over by \(-budget.remaining)" : "\(budget.remaining) left")
            html.markup("</span></div><div class=\"bar\"><span style=\"width:\(permille / 10).\(permille % 10)%\"></span></div></li>\n")
        }
        html.markup("</ul>\n")
        if categoryCount > Int64(budgets.count) {
            html.markup("<p class=\"more\">The first \(budgets.count) of \(categoryCount) categories; <a href=\"")
            html.href(Categories.collection)
            html.markup("\">/categories</a> has them all.</p>\n")
        }
    }

    /// `2026-11` as `November 2026`; anything else as it is.
    static func monthName(_ month: String) -> String {
        guard let parsed = Month(month) else { return month }
        return "\(monthNames[parsed.month - 1]) \(parsed.year)"
    }

    private static let monthNames = [
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ]

    /// Inline, so the page needs nothing but itself; it reads the same without it.
    private static let style = """
        body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}\
        main{max-width:760px;margin:0 auto;padding:32px 24px}\
        h1{margin:0;font-size:28px}h2{margin:32px 0 12px;font-size:18px}.lead{margin:4px 0 0;color:#59636e}\
        a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}\
        table,ul.budgets,ul.endpoints{width:100%;margin:0;padding:0;background:#fff;border:1px solid #d1d9e0;border-radius:8px}\
        table{border-collapse:separate;border-spacing:0}\
        th,td{padding:8px 16px;text-align:left;border-top:1px solid #d1d9e0}thead th{border-top:0;color:#59636e;font-weight:600}\
        .count{text-align:right;font-variant-numeric:tabular-nums}\
        li{list-style:none;padding:10px 16px;border-top:1px solid #d1d9e0}li:first-child{border-top:0}\
        .line{display:flex;justify-content:space-between;gap:16px}.figures{color:#59636e;font-variant-numeric:tabular-nums}\
        .bar{height:8px;margin-top:6px;background:#e6eaef;border-radius:4px;overflow:hidden}\
        .bar span{display:block;height:100%;background:#1f883d}.over .bar span{background:#cf222e}.over .figures{color:#cf222e}\
        .endpoints li{padding:8px 16px}.endpoints a{display:inline-block;min-width:128px}\
        .endpoints span,.more,.empty{color:#59636e}
        """
}
