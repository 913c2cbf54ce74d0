import BudgetAPI
import Foundation
import HTTPServer
import Testing
import TestSupport
import APITestSupport

/// Issue 27, "Done means" 2: two ledgers hold the same ids, titles, import ids, Idempotency-Keys and
/// collection names; the victim's records carry a canary string. For every route the service registers (its
/// route table, `BudgetApp.Service.routes`) and every method, a member of the attacker's ledger only, with a
/// token pinned to it or not, unscoped and under `/ledgers/{A}/…`:
/// - never reads a canary (lists, filters, `q`, `_embed`, `_expand`, `_sort`, CSV, `/db`, months, reports, the
///   feed and its long-poll, batch, import, generic collections, the home page), and reads the same answers
///   before and after the victim's ledger was filled;
/// - never writes into the victim's ledger: a digest of its rows in SQL and its change feed are the same
///   before and after every write the attacker tries;
/// - never replays the victim's Idempotency-Key answer;
/// - gets 404 under `/ledgers/{B}/…`, with the body of a ledger that does not exist.
/// A viewer of the attacker's ledger and a `read` token read what the owner reads and get 403 on every write;
/// no token is 401, a revoked or expired one too. Both directions run: the victim is ledger 1 (what a
/// statement that forgets its ledger defaults to) and then the attacker is.
///
/// `routeTable` names every route; the test fails when the service registers one it does not cover.
@Suite struct LedgerIsolationTests {
    /// Whether the victim is ledger 1 (the first user's) or the second user's.
    enum Direction: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case victimIsLedgerOne, attackerIsLedgerOne
        var testDescription: String { rawValue }
    }

    static let mark = "zqcanaryB"
    static let month = "2026-11"

    static func options() -> BudgetApp.Options {
        var options = BudgetApp.Options()
        options.signupIsOpen = true
        options.passwordCost = 10
        options.allowsReset = true
        return options
    }

    /// The route table this test covers, each route with what its isolation checks do. Equal to the service's.
    @Test func theRouteTableIsCovered() async throws {
        try await TestApp.with(options: Self.options()) { app in
            let registered = Set(app.service.routes.map(\.description))
            let covered = Set(Self.routeTable().map(\.signature))
            #expect(registered.subtracting(covered).sorted() == [], "routes the isolation test does not cover")
            #expect(covered.subtracting(registered).sorted() == [], "routes the isolation test covers that the service lacks")
            #expect(Self.routeTable().count == covered.count, "a route is in the table twice")
        }
    }

    @Test(arguments: Direction.allCases)
    func aMemberOfOneLedgerNeverReachesAnother(direction: Direction) async throws {
        try await TestApp.with(options: Self.options()) { app in
            let fixture = try await Fixture.make(app, direction: direction)
            let table = Self.routeTable()
            #expect(Set(app.service.routes.map(\.description)) == Set(table.map(\.signature)))

            // Reads: baseline with A filled and B still empty, then B filled.
            let baseline = try await fixture.readAll(table)
            try await fixture.fillVictim()
            let filled = try await fixture.readAll(table)
            for (key, answer) in baseline where filled[key] != answer {
                fixture.leak(
                    "answer changed when B was filled: \(key)\n  before: \(answer.prefix(300))\n  after:  \(filled[key]?.prefix(300) ?? "none")")
            }
            try await fixture.longPollIsNotWokenByTheVictim()
            // B as it is now; nothing A does from here on may change it.
            let digestBefore = try await fixture.digest(fixture.b)
            let feedBefore = try await fixture.victimFeed()

            // Every ledger route under /ledgers/B/… is the 404 of a ledger that does not exist.
            for route in table { try await fixture.probeVictimPrefix(route) }
            // A viewer and a read token read what the owner reads and may write nothing.
            let digestA = try await fixture.digest(fixture.a)
            for route in table { try await fixture.checkReaders(route) }
            #expect(try await fixture.digest(fixture.a) == digestA, "a viewer's or read token's refused write changed A")
            // No token: 401 on every route that needs one.
            for route in table { try await fixture.checkNoToken(route) }

            // Writes: each route's own attempts, then B's rows and feed are unchanged.
            for route in table where route.method != "GET" { try await route.attack(fixture) }
            try await fixture.victimCatchUp()
            let digestAfter = try await fixture.digest(fixture.b)
            for (table, before) in digestBefore where digestAfter[table] != before {
                fixture.leak("B's \(table) changed during A's writes")
            }
            #expect(try await fixture.victimFeed() == feedBefore, "B's change feed changed during A's writes")
            try await fixture.checkTokenRules()
            #expect(fixture.leaks.isEmpty, "\(fixture.leaks.count) leaks:\n\(fixture.leaks.joined(separator: "\n"))")
        }
    }

    // MARK: The route table

    /// How the isolation test exercises one registered route.
    struct RouteCase {
        enum Kind { case open, unscopedOnly, ledger, ledgerAdmin }
        let method: String
        let pattern: String
        let kind: Kind
        /// Concrete paths (unscoped, in A) a GET reads; each is read in every caller variant and compared.
        var reads: [Read] = []
        /// One concrete request of this route in A (path unscoped, body): for the prefix, viewer and no-token sweeps.
        var sample: Sample
        /// The attacker's writes against B, for write routes.
        var attack: (Fixture) async throws -> Void = { _ in }

        var signature: String { "\(method) \(pattern)" }
    }

    struct Read: Hashable {
        let path: String
        var csv = false
        /// Whether the answer may differ between two reads with nothing written (metrics).
        var volatile = false
    }

    struct Sample {
        let path: String
        var body: String?
        var contentType: String?
    }

    static func read(_ paths: String...) -> [Read] { paths.map { Read(path: $0) } }
    static func csv(_ paths: String...) -> [Read] { paths.map { Read(path: $0, csv: true) } }

    static func routeTable() -> [RouteCase] {
        let m = month
        return [
            // Open and unscoped-only routes.
            RouteCase(method: "GET", pattern: "/health", kind: .open, reads: read("/health"), sample: Sample(path: "/health")),
            RouteCase(method: "GET", pattern: "/ready", kind: .open, reads: read("/ready"), sample: Sample(path: "/ready")),
            RouteCase(
                method: "GET", pattern: "/metrics", kind: .unscopedOnly, reads: [Read(path: "/metrics", volatile: true)],
                sample: Sample(path: "/metrics")),
            RouteCase(
                method: "GET", pattern: "/openapi.yaml", kind: .unscopedOnly, reads: read("/openapi.yaml"), sample: Sample(path: "/openapi.yaml")),
            RouteCase(
                method: "POST", pattern: "/auth/users", kind: .open, sample: Sample(path: "/auth/users", body: #"{"name":"x","password":"short"}"#),
                attack: { f in try await f.attackSignUp() }),
            RouteCase(
                method: "POST", pattern: "/auth/tokens", kind: .open, sample: Sample(path: "/auth/tokens", body: "{}"),
                attack: { f in try await f.attackMint() }),
            RouteCase(method: "GET", pattern: "/auth/tokens", kind: .unscopedOnly, reads: read("/auth/tokens"), sample: Sample(path: "/auth/tokens")),
            RouteCase(
                method: "DELETE", pattern: "/auth/tokens/:id", kind: .unscopedOnly, sample: Sample(path: "/auth/tokens/999999"),
                attack: { f in try await f.attackRevoke() }),
            RouteCase(method: "GET", pattern: "/auth/me", kind: .unscopedOnly, reads: read("/auth/me"), sample: Sample(path: "/auth/me")),
            RouteCase(method: "GET", pattern: "/ledgers", kind: .unscopedOnly, reads: read("/ledgers"), sample: Sample(path: "/ledgers")),
            RouteCase(
                method: "POST", pattern: "/ledgers", kind: .unscopedOnly, sample: Sample(path: "/ledgers", body: #"{"name":"Extra"}"#),
                attack: { f in try await f.attackCreateLedger() }),
            RouteCase(
                method: "GET", pattern: "/ledgers/:ledger", kind: .ledgerAdmin, reads: read("/ledgers/{A}"), sample: Sample(path: "/ledgers/{L}")),
            RouteCase(
                method: "PATCH", pattern: "/ledgers/:ledger", kind: .ledgerAdmin, sample: Sample(path: "/ledgers/{L}", body: #"{"name":"Renamed"}"#),
                attack: { f in try await f.attackLedgerAdmin("PATCH", "/ledgers/{B}", #"{"name":"Renamed"}"#) }),
            RouteCase(
                method: "DELETE", pattern: "/ledgers/:ledger", kind: .ledgerAdmin, sample: Sample(path: "/ledgers/{L}"),
                attack: { f in try await f.attackLedgerAdmin("DELETE", "/ledgers/{B}", nil) }),
            RouteCase(
                method: "GET", pattern: "/ledgers/:ledger/members", kind: .ledgerAdmin, reads: read("/ledgers/{A}/members"),
                sample: Sample(path: "/ledgers/{L}/members")),
            RouteCase(
                method: "PUT", pattern: "/ledgers/:ledger/members/:userId", kind: .ledgerAdmin,
                sample: Sample(path: "/ledgers/{L}/members/{viewer}", body: #"{"role":"editor"}"#),
                attack: { f in try await f.attackLedgerAdmin("PUT", "/ledgers/{B}/members/{attacker}", #"{"role":"owner"}"#) }),
            RouteCase(
                method: "DELETE", pattern: "/ledgers/:ledger/members/:userId", kind: .ledgerAdmin,
                sample: Sample(path: "/ledgers/{L}/members/{owner}"),
                attack: { f in try await f.attackLedgerAdmin("DELETE", "/ledgers/{B}/members/{victim}", nil) }),

            // The ledger's data.
            RouteCase(method: "GET", pattern: "/", kind: .ledger, reads: read("/"), sample: Sample(path: "/")),
            RouteCase(
                method: "GET", pattern: "/changes", kind: .ledger,
                reads: read(
                    "/changes?since=0", "/changes?since=0&limit=2", "/changes?since=0&collection=posts",
                    "/changes?since=0&collection=secrets", "/changes?since=0&collection=nowhere", "/changes?since=0&collection=categories"),
                sample: Sample(path: "/changes?since=0")),
            RouteCase(
                method: "GET", pattern: "/categories", kind: .ledger,
                reads: read(
                    "/categories", "/categories?_embed=transactions", "/categories?_embed=budgets", "/categories?q=canary",
                    "/categories?title=Travel", "/categories?id=7", "/categories?_sort=-title", "/categories?title_like=canary",
                    "/categories?_page=1&_per_page=1", "/categories?month=\(m)") + csv("/categories"),
                sample: Sample(path: "/categories")),
            RouteCase(
                method: "POST", pattern: "/categories", kind: .ledger, sample: Sample(path: "/categories", body: #"{"title":"V","amount":1}"#),
                attack: { f in try await f.attackPostCategory() }),
            RouteCase(
                method: "GET", pattern: "/categories/:id", kind: .ledger,
                reads: read("/categories/1", "/categories/6", "/categories/7", "/categories/1?_embed=transactions", "/categories/1?month=\(m)"),
                sample: Sample(path: "/categories/1")),
            RouteCase(
                method: "PUT", pattern: "/categories/:id", kind: .ledger,
                sample: Sample(path: "/categories/1", body: #"{"title":"Food","amount":3}"#),
                attack: { f in try await f.attackPutCategory() }),
            RouteCase(
                method: "PATCH", pattern: "/categories/:id", kind: .ledger, sample: Sample(path: "/categories/1", body: #"{"amount":3}"#),
                attack: { f in try await f.expectAbsent("PATCH", "/categories/6", #"{"amount":3}"#) }),
            RouteCase(
                method: "DELETE", pattern: "/categories/:id", kind: .ledger, sample: Sample(path: "/categories/1"),
                attack: { f in try await f.attackDeleteCategory() }),
            RouteCase(
                method: "GET", pattern: "/categories/:id/transactions", kind: .ledger,
                reads: read(
                    "/categories/1/transactions", "/categories/6/transactions", "/categories/7/transactions",
                    "/categories/1/transactions?_expand=category", "/categories/1/transactions?q=canary") + csv("/categories/1/transactions"),
                sample: Sample(path: "/categories/1/transactions")),
            RouteCase(
                method: "POST", pattern: "/categories/:id/transactions", kind: .ledger,
                sample: Sample(path: "/categories/1/transactions", body: #"{"title":"V","amount":"-1.00","date":"2026-11-03"}"#),
                attack: { f in try await f.expectAbsent("POST", "/categories/6/transactions", #"{"title":"V","amount":"-1.00","date":"2026-11-03"}"#)
                }),
            RouteCase(
                method: "GET", pattern: "/categories/:id/budgets", kind: .ledger,
                reads: read("/categories/1/budgets", "/categories/6/budgets", "/categories/1/budgets?_expand=category"),
                sample: Sample(path: "/categories/1/budgets")),
            RouteCase(
                method: "POST", pattern: "/categories/:id/budgets", kind: .ledger,
                sample: Sample(path: "/categories/1/budgets", body: #"{"month":"2026-12","amount":1}"#),
                attack: { f in try await f.expectAbsent("POST", "/categories/6/budgets", #"{"month":"2026-12","amount":1}"#) }),
            RouteCase(
                method: "GET", pattern: "/categories/:id/budgets/:month", kind: .ledger,
                reads: read("/categories/1/budgets/\(m)", "/categories/6/budgets/\(m)", "/categories/7/budgets/\(m)"),
                sample: Sample(path: "/categories/1/budgets/\(m)")),
            RouteCase(
                method: "PUT", pattern: "/categories/:id/budgets/:month", kind: .ledger,
                sample: Sample(path: "/categories/1/budgets/\(m)", body: #"{"amount":2}"#),
                attack: { f in try await f.attackMonthBudget() }),
            RouteCase(
                method: "DELETE", pattern: "/categories/:id/budgets/:month", kind: .ledger, sample: Sample(path: "/categories/1/budgets/\(m)"),
                attack: { f in try await f.expectAbsent("DELETE", "/categories/6/budgets/\(m)", nil) }),
            RouteCase(
                method: "GET", pattern: "/transactions", kind: .ledger,
                reads: read(
                    "/transactions", "/transactions?_expand=category", "/transactions?q=canary", "/transactions?note_like=canary",
                    "/transactions?importId=imp-8", "/transactions?categoryId=7", "/transactions?_sort=-note", "/transactions?_sort=title,-id",
                    "/transactions?month=\(m)", "/transactions?_page=1&_per_page=1", "/transactions?parentId=12")
                    + csv("/transactions", "/transactions?_sort=-note"),
                sample: Sample(path: "/transactions")),
            RouteCase(
                method: "POST", pattern: "/transactions", kind: .ledger,
                sample: Sample(path: "/transactions", body: #"{"categoryId":1,"title":"V","amount":"-1.00","date":"2026-11-03"}"#),
                attack: { f in try await f.attackPostTransaction() }),
            RouteCase(
                method: "GET", pattern: "/transactions/:id", kind: .ledger,
                reads: read(
                    "/transactions/1", "/transactions/1?_expand=category", "/transactions/8", "/transactions/9", "/transactions/12",
                    "/transactions/13"),
                sample: Sample(path: "/transactions/1")),
            RouteCase(
                method: "PUT", pattern: "/transactions/:id", kind: .ledger,
                sample: Sample(path: "/transactions/1", body: #"{"categoryId":1,"title":"V","amount":"-1.00","date":"2026-11-03"}"#),
                attack: { f in try await f.attackPutTransaction() }),
            RouteCase(
                method: "PATCH", pattern: "/transactions/:id", kind: .ledger, sample: Sample(path: "/transactions/1", body: #"{"title":"V"}"#),
                attack: { f in try await f.attackPatchTransaction() }),
            RouteCase(
                method: "DELETE", pattern: "/transactions/:id", kind: .ledger, sample: Sample(path: "/transactions/1"),
                attack: { f in
                    try await f.expectAbsent("DELETE", "/transactions/10", nil)
                    try await f.expectAbsent("DELETE", "/transactions/13", nil)
                }),
            RouteCase(
                method: "POST", pattern: "/transactions/import", kind: .ledger,
                sample: Sample(path: "/transactions/import", body: "date,title,amount,category\n2026-11-03,V,-1.00,Food\n", contentType: "text/csv"),
                attack: { f in try await f.attackImport() }),
            RouteCase(
                method: "GET", pattern: "/accounts", kind: .ledger,
                reads: read(
                    "/accounts", "/accounts?q=canary", "/accounts?name_like=canary", "/accounts?_sort=-name", "/accounts?id=6",
                    "/accounts?balance_lt=0", "/accounts?_page=1&_per_page=1"),
                sample: Sample(path: "/accounts")),
            RouteCase(
                method: "POST", pattern: "/accounts", kind: .ledger, sample: Sample(path: "/accounts", body: #"{"name":"V","type":"cash"}"#),
                attack: { f in try await f.attackPostAccount() }),
            RouteCase(
                method: "GET", pattern: "/accounts/:id", kind: .ledger, reads: read("/accounts/1", "/accounts/5", "/accounts/6"),
                sample: Sample(path: "/accounts/1")),
            RouteCase(
                method: "PUT", pattern: "/accounts/:id", kind: .ledger,
                sample: Sample(path: "/accounts/1", body: #"{"name":"Checking","type":"checking"}"#),
                attack: { f in try await f.attackPutAccount() }),
            RouteCase(
                method: "PATCH", pattern: "/accounts/:id", kind: .ledger, sample: Sample(path: "/accounts/1", body: #"{"closed":true}"#),
                attack: { f in try await f.expectAbsent("PATCH", "/accounts/6", #"{"closed":true}"#) }),
            RouteCase(
                method: "DELETE", pattern: "/accounts/:id", kind: .ledger, sample: Sample(path: "/accounts/1"),
                attack: { f in try await f.expectAbsent("DELETE", "/accounts/6", nil) }),
            RouteCase(
                method: "GET", pattern: "/accounts/:id/transactions", kind: .ledger,
                reads: read(
                    "/accounts/1/transactions", "/accounts/5/transactions", "/accounts/6/transactions", "/accounts/1/transactions?q=canary",
                    "/accounts/1/transactions?_expand=category") + csv("/accounts/1/transactions"),
                sample: Sample(path: "/accounts/1/transactions")),
            RouteCase(
                method: "POST", pattern: "/accounts/:id/transactions", kind: .ledger,
                sample: Sample(path: "/accounts/1/transactions", body: #"{"title":"V","amount":"1.00","date":"2026-11-03"}"#),
                attack: { f in try await f.attackPostAccountTransaction() }),
            RouteCase(
                method: "POST", pattern: "/accounts/:id/transactions/import", kind: .ledger,
                sample: Sample(path: "/accounts/1/transactions/import", body: "date,title,amount\n2026-11-03,V,-1.00\n", contentType: "text/csv"),
                attack: { f in try await f.attackAccountImport() }),
            RouteCase(
                method: "GET", pattern: "/budgets", kind: .ledger,
                reads: read("/budgets", "/budgets?categoryId=6", "/budgets?_expand=category", "/budgets?_sort=-id") + csv("/budgets"),
                sample: Sample(path: "/budgets")),
            RouteCase(
                method: "POST", pattern: "/budgets", kind: .ledger,
                sample: Sample(path: "/budgets", body: #"{"categoryId":1,"month":"2026-12","amount":1}"#),
                attack: { f in try await f.attackPostBudget() }),
            RouteCase(
                method: "GET", pattern: "/budgets/:id", kind: .ledger, reads: read("/budgets/1", "/budgets/6", "/budgets/1?_expand=category"),
                sample: Sample(path: "/budgets/1")),
            RouteCase(
                method: "PUT", pattern: "/budgets/:id", kind: .ledger,
                sample: Sample(path: "/budgets/1", body: #"{"categoryId":1,"month":"2026-11","amount":1}"#),
                attack: { f in try await f.attackPutBudget() }),
            RouteCase(
                method: "PATCH", pattern: "/budgets/:id", kind: .ledger, sample: Sample(path: "/budgets/1", body: #"{"amount":1}"#),
                attack: { f in try await f.expectAbsent("PATCH", "/budgets/7", #"{"amount":1}"#) }),
            RouteCase(
                method: "DELETE", pattern: "/budgets/:id", kind: .ledger, sample: Sample(path: "/budgets/1"),
                attack: { f in try await f.expectAbsent("DELETE", "/budgets/7", nil) }),
            RouteCase(
                method: "GET", pattern: "/months", kind: .ledger,
                reads: read("/months", "/months?from=2026-10&to=2026-12") + csv("/months?from=2026-10&to=2026-12"),
                sample: Sample(path: "/months?from=2026-10&to=2026-12")),
            RouteCase(
                method: "GET", pattern: "/months/:month", kind: .ledger, reads: read("/months/\(m)", "/months/2026-12") + csv("/months/\(m)"),
                sample: Sample(path: "/months/\(m)")),
            RouteCase(
                method: "GET", pattern: "/reports/spending", kind: .ledger,
                reads: read("/reports/spending?from=\(m)&to=\(m)", "/reports/spending?from=2026-01&to=2026-12")
                    + csv("/reports/spending?from=\(m)&to=\(m)"),
                sample: Sample(path: "/reports/spending?from=\(m)&to=\(m)")),
            RouteCase(method: "GET", pattern: "/db", kind: .ledger, reads: read("/db"), sample: Sample(path: "/db")),
            RouteCase(
                method: "PUT", pattern: "/db", kind: .ledger, sample: Sample(path: "/db", body: "{}"),
                attack: { f in try await f.attackReplaceDatabase() }),
            RouteCase(
                method: "POST", pattern: "/batch", kind: .ledger,
                sample: Sample(path: "/batch", body: #"{"operations":[{"method":"GET","path":"/categories"}]}"#),
                attack: { f in try await f.attackBatch() }),
            // Transfers and reconciling (docs/accounts.md) name accounts by id: B's accounts 5, 6 and 7 are unknown to A.
            RouteCase(
                method: "POST", pattern: "/transfers", kind: .ledger,
                sample: Sample(path: "/transfers", body: #"{"fromAccountId":1,"toAccountId":2,"amount":1}"#),
                attack: { f in try await f.attackTransfer() }),
            RouteCase(
                method: "POST", pattern: "/accounts/:id/reconcile", kind: .ledger,
                sample: Sample(path: "/accounts/1/reconcile", body: #"{"balance":"0.00","date":"2026-11-30"}"#),
                attack: { f in try await f.attackReconcile() }),

            // Schedules (issue #31) name accounts and categories, in their members and their parts: B's are unknown to A.
            RouteCase(
                method: "GET", pattern: "/schedules", kind: .ledger,
                reads: read(
                    "/schedules", "/schedules?q=canary", "/schedules?title_like=canary", "/schedules?_sort=-title", "/schedules?id=6",
                    "/schedules?categoryId=6", "/schedules?_page=1&_per_page=1"),
                sample: Sample(path: "/schedules")),
            RouteCase(
                method: "POST", pattern: "/schedules", kind: .ledger,
                sample: Sample(path: "/schedules", body: #"{"title":"V","amount":1,"categoryId":1,"frequency":"once","firstDate":"2099-01-01"}"#),
                attack: { f in try await f.attackPostSchedule() }),
            RouteCase(
                method: "GET", pattern: "/schedules/upcoming", kind: .ledger,
                reads: read("/schedules/upcoming", "/schedules/upcoming?days=366"), sample: Sample(path: "/schedules/upcoming")),
            RouteCase(
                method: "GET", pattern: "/schedules/:id", kind: .ledger, reads: read("/schedules/1", "/schedules/5", "/schedules/6", "/schedules/7"),
                sample: Sample(path: "/schedules/1")),
            RouteCase(
                method: "PUT", pattern: "/schedules/:id", kind: .ledger,
                sample: Sample(path: "/schedules/1", body: #"{"title":"V","amount":1,"categoryId":1,"frequency":"once","firstDate":"2099-01-01"}"#),
                attack: { f in try await f.attackPutSchedule() }),
            RouteCase(
                method: "PATCH", pattern: "/schedules/:id", kind: .ledger, sample: Sample(path: "/schedules/1", body: #"{"title":"V"}"#),
                attack: { f in try await f.attackPatchSchedule() }),
            RouteCase(
                method: "DELETE", pattern: "/schedules/:id", kind: .ledger, sample: Sample(path: "/schedules/1"),
                attack: { f in try await f.expectAbsent("DELETE", "/schedules/6", nil) }),

            // Generic collections.
            RouteCase(
                method: "GET", pattern: "/:name", kind: .ledger,
                reads: read(
                    "/posts", "/posts?_embed=comments", "/posts?q=canary", "/posts?body_like=canary", "/posts?body=zqcanaryB",
                    "/posts?_sort=-body", "/posts?_sort=body", "/posts?id=5", "/comments", "/comments?_expand=post", "/comments?text_like=canary",
                    "/comments?postId=5", "/profile", "/secrets", "/nowhere", "/posts?_page=1&_per_page=1")
                    + csv("/posts", "/comments?_sort=-text"),
                sample: Sample(path: "/posts")),
            RouteCase(
                method: "POST", pattern: "/:name", kind: .ledger, sample: Sample(path: "/posts", body: #"{"title":"V"}"#),
                attack: { f in try await f.attackPostDocument() }),
            RouteCase(
                method: "PUT", pattern: "/:name", kind: .ledger, sample: Sample(path: "/profile", body: #"{"name":"V"}"#),
                attack: { f in try await f.attackSingular("PUT") }),
            RouteCase(
                method: "PATCH", pattern: "/:name", kind: .ledger, sample: Sample(path: "/profile", body: #"{"name":"V"}"#),
                attack: { f in try await f.attackSingular("PATCH") }),
            RouteCase(
                method: "GET", pattern: "/:name/:id", kind: .ledger,
                reads: read("/posts/1", "/posts/1?_embed=comments", "/posts/5", "/posts/6", "/comments/1?_expand=post", "/comments/2", "/secrets/1"),
                sample: Sample(path: "/posts/1")),
            RouteCase(
                method: "PUT", pattern: "/:name/:id", kind: .ledger, sample: Sample(path: "/posts/1", body: #"{"title":"V"}"#),
                attack: { f in try await f.attackPutDocument() }),
            RouteCase(
                method: "PATCH", pattern: "/:name/:id", kind: .ledger, sample: Sample(path: "/posts/1", body: #"{"title":"V"}"#),
                attack: { f in
                    try await f.expectAbsent("PATCH", "/posts/8", #"{"title":"V"}"#); try await f.expectAbsent("PATCH", "/secrets/1", #"{"x":1}"#)
                }),
            RouteCase(
                method: "DELETE", pattern: "/:name/:id", kind: .ledger, sample: Sample(path: "/posts/1"),
                attack: { f in try await f.attackDeleteDocument() }),
            RouteCase(
                method: "GET", pattern: "/:name/:id/:child", kind: .ledger,
                reads: read("/posts/1/comments", "/posts/5/comments", "/posts/1/comments?q=canary", "/secrets/1/comments"),
                sample: Sample(path: "/posts/1/comments")),
            RouteCase(
                method: "POST", pattern: "/:name/:id/:child", kind: .ledger, sample: Sample(path: "/posts/1/comments", body: #"{"text":"V"}"#),
                attack: { f in try await f.attackNestedPost() }),
        ]
    }
}

// MARK: - The fixture: two ledgers, their users and tokens

/// One caller's way in: a token and whether the path carries `/ledgers/{A}`.
struct Variant: CustomStringConvertible {
    let name: String
    let token: String
    let scoped: Bool
    var description: String { name }
}

final class Fixture {
    typealias RouteCase = LedgerIsolationTests.RouteCase
    let app: TestApp
    let direction: LedgerIsolationTests.Direction
    /// The attacker's ledger and the victim's.
    let a: Int, b: Int
    let attackerUser: Int, victimUser: Int, viewerUser: Int
    /// Tokens: A's owner (member of A only) unpinned and pinned to A, a read-scope token of A's owner, A's viewer
    /// pinned to A and not, B's owner.
    let owner: String, pinned: String, readOnly: String, viewer: String, viewerPinned: String, victim: String
    let victimTokenID: Int
    let mark = LedgerIsolationTests.mark
    private(set) var leaks: [String] = []
    private var writes = 0

    init(
        app: TestApp, direction: LedgerIsolationTests.Direction, a: Int, b: Int, attackerUser: Int, victimUser: Int, viewerUser: Int,
        owner: String, pinned: String, readOnly: String, viewer: String, viewerPinned: String, victim: String, victimTokenID: Int
    ) {
        self.app = app; self.direction = direction; self.a = a; self.b = b
        self.attackerUser = attackerUser; self.victimUser = victimUser; self.viewerUser = viewerUser
        self.owner = owner; self.pinned = pinned; self.readOnly = readOnly; self.viewer = viewer; self.viewerPinned = viewerPinned
        self.victim = victim; self.victimTokenID = victimTokenID
    }

    /// Users and ledgers in `direction`'s order (the first user owns ledger 1), A filled, B empty.
    static func make(_ app: TestApp, direction: LedgerIsolationTests.Direction) async throws -> Fixture {
        let first = direction == .victimIsLedgerOne ? "victim" : "attacker"
        let second = direction == .victimIsLedgerOne ? "attacker" : "victim"
        let firstID = try await signUp(app, first), secondID = try await signUp(app, second)
        let viewerID = try await signUp(app, "viewer")
        let (victimUser, attackerUser) = direction == .victimIsLedgerOne ? (firstID, secondID) : (secondID, firstID)
        let (ownerToken, _) = try await logIn(app, "attacker")
        let (victimToken, victimTokenID) = try await logIn(app, "victim", extra: #","tokenName":"zqcanaryB token""#)
        let a = try await defaultLedger(app, ownerToken), b = try await defaultLedger(app, victimToken)
        #expect(a != b)
        #expect((direction == .victimIsLedgerOne ? b : a) == 1, "the first user owns ledger 1")
        let added = try await app.request("PUT", "/ledgers/\(a)/members/\(viewerID)", json: #"{"role":"viewer"}"#, headers: bearer(ownerToken))
        #expect(added.status == 201, "\(added.text)")
        let (pinned, _) = try await logIn(app, "attacker", extra: #","ledgerId":\#(a)"#)
        let (readOnly, _) = try await logIn(app, "attacker", extra: #","scope":"read""#)
        let (viewer, _) = try await logIn(app, "viewer")
        let (viewerPinned, _) = try await logIn(app, "viewer", extra: #","ledgerId":\#(a)"#)
        let fixture = Fixture(
            app: app, direction: direction, a: a, b: b, attackerUser: attackerUser, victimUser: victimUser, viewerUser: viewerID,
            owner: ownerToken, pinned: pinned, readOnly: readOnly, viewer: viewer, viewerPinned: viewerPinned,
            victim: victimToken, victimTokenID: victimTokenID)
        let seeded = try await app.request("PUT", "/ledgers/\(a)/db", json: Self.seed(victim: false), headers: bearer(ownerToken))
        #expect(seeded.status == 200, "A's seed: \(seeded.status) \(seeded.text.prefix(300))")
        try await fixture.catchUp(ownerToken)
        return fixture
    }

    /// B's data: A's ids, titles and import ids, with canaries, plus records, a category title ("Travel") and a
    /// collection (`secrets`) only B has.
    static func seed(victim: Bool) -> String {
        let m = LedgerIsolationTests.mark
        let note = victim ? "\(m) note" : "plain"
        var categories = [#"{"id":1,"title":"Food","amount":100}"#, #"{"id":2,"title":"Rent","amount":900}"#]
        // Category 3: the same id, another title (B's a canary): what a title looked up by id alone shows.
        categories.append(#"{"id":3,"title":"\#(victim ? m + " clothes" : "Clothes")","amount":30}"#)
        var transactions = [
            #"{"id":1,"categoryId":1,"title":"Milk","amount":"-5.00","date":"2026-11-02","note":"\#(note)","importId":"imp-1"}"#,
            #"{"id":2,"categoryId":2,"title":"Rent Nov","amount":"-900.00","date":"2026-11-01","note":"\#(note)","importId":"imp-2"}"#,
            #"{"id":3,"categoryId":3,"title":"Shirt","amount":"-30.00","date":"2026-11-07"}"#,
            // Income into an account, without a category.
            #"{"id":4,"accountId":1,"title":"Salary","amount":"-2000.00","date":"2026-11-01","payee":"Employer","importId":"imp-4"}"#,
        ]
        var accounts = [#"{"id":1,"name":"Checking","type":"checking","openingBalance":"100.00","openedOn":"2026-10-01"}"#]
        var budgets = [#"{"id":1,"categoryId":1,"month":"2026-11","amount":50}"#]
        // Due in ten days, so that upcoming lists them and no poster run during the test changes them.
        let soon = Self.day(daysFromNow: 10)
        var schedules = [
            #"{"id":1,"title":"Rent","amount":900,"accountId":1,"categoryId":2,"note":"\#(note)","frequency":"monthly","firstDate":"\#(soon)"}"#
        ]
        var posts = [#"{"id":1,"title":"Hello","body":"\#(victim ? m + " body" : "hello")"}"#]
        var comments = [#"{"id":1,"postId":1,"text":"\#(victim ? m + " comment" : "first")"}"#]
        var extra = ""
        if victim {
            categories += [
                #"{"id":5,"title":"Holidays","amount":500}"#, #"{"id":6,"title":"Travel","amount":300}"#,
                #"{"id":7,"title":"\#(m) category","amount":4242}"#,
            ]
            transactions += [
                #"{"id":8,"categoryId":7,"title":"\#(m) tx","amount":"-913.37","date":"2026-11-04","importId":"imp-8"}"#,
                #"{"id":9,"categoryId":6,"title":"Trip","amount":"-77.70","date":"2026-11-05","note":"\#(m) trip","importId":"imp-9"}"#,
                #"{"id":10,"categoryId":6,"title":"Ten","amount":"-10.00","date":"2026-11-06","note":"\#(m) ten"}"#,
            ]
            accounts += [
                #"{"id":5,"name":"Savings","type":"savings"}"#, #"{"id":7,"name":"Brokerage","type":"investment"}"#,
                #"{"id":6,"name":"\#(m) account","type":"credit","note":"\#(m) note","openingBalance":"-4242.00"}"#,
            ]
            transactions += [
                #"{"id":11,"accountId":6,"title":"Card","amount":"-42.42","date":"2026-11-05","payee":"\#(m) payee","importId":"imp-11"}"#,
                // A split with its parts 13 and 14 in B's categories (docs/api.md, splits).
                #"{"id":12,"accountId":6,"title":"Split","amount":"-20.00","date":"2026-11-05","splits":[{"id":13,"categoryId":6,"amount":"-10.00","note":"\#(m) part"},{"id":14,"categoryId":7,"amount":"-10.00"}]}"#,
            ]
            budgets += [#"{"id":6,"categoryId":6,"month":"2026-11","amount":61}"#, #"{"id":7,"categoryId":7,"month":"2026-11","amount":71}"#]
            schedules += [
                #"{"id":5,"title":"Gym","amount":30,"categoryId":6,"frequency":"weekly","firstDate":"\#(soon)"}"#,
                #"{"id":6,"title":"\#(m) schedule","amount":"42.42","accountId":6,"payee":"\#(m) payee","frequency":"monthly","firstDate":"\#(soon)","autoPost":true}"#,
                #"{"id":7,"title":"Split","amount":3,"splits":[{"categoryId":7,"amount":1,"note":"\#(m) part"},{"categoryId":6,"amount":2}],"frequency":"once","firstDate":"\#(soon)"}"#,
            ]
            posts += [
                #"{"id":5,"title":"\#(m) five","body":"x"}"#, #"{"id":6,"title":"six","body":"\#(m) six"}"#,
                #"{"id":8,"title":"eight","body":"\#(m) eight"}"#,
            ]
            comments += [#"{"id":2,"postId":5,"text":"\#(m) on five"}"#]
            extra = #","secrets":[{"id":1,"text":"\#(m) secret"}]"#
        }
        return """
            {"categories":[\(categories.joined(separator: ","))],"accounts":[\(accounts.joined(separator: ","))],"transactions":[\(transactions.joined(separator: ","))],\
            "budgets":[\(budgets.joined(separator: ","))],"schedules":[\(schedules.joined(separator: ","))],"posts":[\(posts.joined(separator: ","))],\
            "comments":[\(comments.joined(separator: ","))],"profile":{"name":"\(victim ? m + " profile" : "home")"}\(extra)}
            """
    }

    /// B filled through its owner's token: `PUT /ledgers/{B}/db`, a renamed ledger, and answers stored under
    /// Idempotency-Keys A will send too. A's seed must survive it.
    func fillVictim() async throws {
        let seeded = try await app.request("PUT", "/ledgers/\(b)/db", json: Self.seed(victim: true), headers: bearer(victim))
        #expect(seeded.status == 200, "B's seed: \(seeded.status) \(seeded.text.prefix(300))")
        let renamed = try await app.request("PATCH", "/ledgers/\(b)", json: #"{"name":"\#(mark) ledger"}"#, headers: bearer(victim))
        #expect(renamed.status == 200, "\(renamed.text)")
        // Keys A sends too, on the same paths (with other bodies: A's answer must be its own, never B's replay).
        for (path, body, key) in [
            ("/categories", #"{"title":"\#(mark) idem","amount":1}"#, "shared-key-1"),
            ("/posts", #"{"title":"\#(mark) idem post"}"#, "shared-key-2"),
            ("/categories", #"{"title":"\#(mark) idem batch","amount":1}"#, "shared-batch-key"),
            // A create written with its key in one statement (migrations/0024).
            ("/transactions", #"{"categoryId":1,"title":"\#(mark) idem","amount":"-1.00","date":"2026-11-03"}"#, "shared-key-3"),
        ] {
            for (prefix, suffix) in [("", ""), ("/ledgers/\(b)", "-scoped")] {
                let stored = try await app.request(
                    "POST", prefix + path, json: body.replacingOccurrences(of: "idem", with: "idem\(suffix)"),
                    headers: bearer(victim) + [("Idempotency-Key", "\"\(key)\(suffix)\"")])
                #expect(stored.status == 201, "B's \(path) with a key: \(stored.status) \(stored.text)")
            }
        }
        try await catchUp(victim)
        try await victimStillHasItsData()
    }

    // MARK: Requests

    func variants(scoped: Bool = true, pinned includePinned: Bool = true) -> [Variant] {
        var all = [Variant(name: "owner", token: owner, scoped: false)]
        if scoped { all.append(Variant(name: "owner under /ledgers/A", token: owner, scoped: true)) }
        if includePinned {
            all.append(Variant(name: "pinned", token: pinned, scoped: false))
            if scoped { all.append(Variant(name: "pinned under /ledgers/A", token: pinned, scoped: true)) }
        }
        return all
    }

    func path(_ template: String, ledger: Int? = nil) -> String {
        template.replacingOccurrences(of: "{A}", with: "\(a)").replacingOccurrences(of: "{B}", with: "\(b)")
            .replacingOccurrences(of: "{L}", with: "\(ledger ?? a)").replacingOccurrences(of: "{viewer}", with: "\(viewerUser)")
            .replacingOccurrences(of: "{owner}", with: "\(attackerUser)").replacingOccurrences(of: "{attacker}", with: "\(attackerUser)")
            .replacingOccurrences(of: "{victim}", with: "\(victimUser)")
    }

    /// A request by the attacker's side: its answer must hold no canary, in body or headers.
    @discardableResult
    func send(
        _ method: String, _ rawPath: String, _ body: String? = nil, token: String?, scoped: Bool = false,
        headers: [(String, String)] = [], contentType: String? = nil, accept: String? = nil
    ) async throws -> TestResponse {
        let target = (scoped ? "/ledgers/\(a)" : "") + path(rawPath)
        var all = headers
        if let token { all += bearer(token) }
        if let contentType { all.append(("Content-Type", contentType)) }
        if let accept { all.append(("Accept", accept)) }
        let response = try await app.request(method, target, json: body, headers: all)
        if response.text.contains(mark) || response.headers.contains(where: { $0.value.contains(mark) }) {
            leak("\(method) \(target) answered a canary of B: \(response.status) \(Self.around(mark, in: response.text))")
        }
        #expect(response.status < 500, "\(method) \(target): \(response.status) \(response.text.prefix(200))")
        return response
    }

    func attack(
        _ method: String, _ path: String, _ body: String? = nil, headers: [(String, String)] = [],
        contentType: String? = nil
    ) async throws -> TestResponse {
        let variant = variants()[writes % 4]
        writes += 1
        return try await send(method, path, body, token: variant.token, scoped: variant.scoped, headers: headers, contentType: contentType)
    }

    func leak(_ text: String) {
        leaks.append("[\(direction.rawValue)] " + text)
    }

    static func around(_ needle: String, in text: String) -> String {
        guard let range = text.range(of: needle) else { return "" }
        let start = text.index(range.lowerBound, offsetBy: -80, limitedBy: text.startIndex) ?? text.startIndex
        let end = text.index(range.upperBound, offsetBy: 80, limitedBy: text.endIndex) ?? text.endIndex
        return "…" + text[start..<end].replacingOccurrences(of: "\n", with: "⏎") + "…"
    }

    // MARK: Reads

    /// Every read of the table in every caller variant: key → status, ETag, X-Sync-Seq, X-Total-Count and body.
    func readAll(_ table: [RouteCase]) async throws -> [String: String] {
        var answers: [String: String] = [:]
        for route in table where route.method == "GET" {
            let scopedToo = route.kind == .ledger
            for read in route.reads {
                for variant in variants(scoped: scopedToo) {
                    let response = try await send(
                        "GET", read.path, token: variant.token, scoped: variant.scoped,
                        accept: read.csv ? "text/csv" : nil)
                    guard !read.volatile else { continue }
                    let key = "GET \(read.path)\(read.csv ? " (CSV)" : "") as \(variant)"
                    answers[key] =
                        "\(response.status) etag=\(response.header("ETag") ?? "-") seq=\(response.header("X-Sync-Seq") ?? "-") "
                        + "total=\(response.header("X-Total-Count") ?? "-") \(response.text)"
                }
            }
        }
        // What only B has is, for A, what does not exist anywhere.
        let secrets = try await send("GET", "/changes?since=0&collection=secrets", token: owner)
        let nowhere = try await send("GET", "/changes?since=0&collection=nowhere", token: owner)
        if secrets.status != nowhere.status {
            leak("GET /changes?collection=secrets (B only) is \(secrets.status), a name nowhere \(nowhere.status)")
        }
        let secretList = try await send("GET", "/secrets", token: owner)
        if secretList.status != 404 { leak("GET /secrets (B's collection) as A: \(secretList.status)") }
        return answers
    }

    /// A's long-poll of its feed, waiting: B's write must not answer it, and it answers no change of B.
    func longPollIsNotWokenByTheVictim() async throws {
        let head = try await send("GET", "/changes?since=0", token: owner)
        let lastSeq = (head.object["lastSeq"] as? Int) ?? 0
        let waitSeconds = 2
        let started = ContinuousClock.now
        let app = self.app, owner = self.owner
        let poll = Task { try await app.request("GET", "/changes?since=\(lastSeq)&wait=\(waitSeconds)", headers: bearer(owner)) }
        // Wait (bounded) until the poll is parked, then write in B.
        let parkedBy = ContinuousClock.now + .seconds(10)
        while app.service.longPollWaiters == 0, ContinuousClock.now < parkedBy { try await Task.sleep(for: .milliseconds(10)) }
        let waiting = app.service.longPollWaiters > 0
        #expect(waiting, "A's long-poll was never seen waiting")
        let written = try await app.request("POST", "/ledgers/\(b)/posts", json: #"{"title":"\#(mark) wake"}"#, headers: bearer(victim))
        #expect(written.status == 201)
        let answer = try await poll.value
        let elapsed = ContinuousClock.now - started
        if answer.text.contains(mark) { leak("A's long-poll of /changes answered B's write: \(Self.around(mark, in: answer.text))") }
        let changes = answer.object["changes"] as? [Any] ?? []
        if !changes.isEmpty { leak("A's long-poll answered \(changes.count) changes after B's write") }
        if waiting, elapsed < .seconds(waitSeconds) - .milliseconds(100) {
            leak("A's long-poll answered after \(elapsed), before its wait of \(waitSeconds) s, on B's write")
        }
        try await catchUp(victim)
    }

    // MARK: Sweeps over the table

    /// `/ledgers/{B}/…` as A's owner answers what `/ledgers/{nowhere}/…` answers: 404, one body.
    func probeVictimPrefix(_ route: RouteCase) async throws {
        guard route.kind == .ledger || route.kind == .ledgerAdmin else { return }
        let sample = route.sample
        let rest = route.kind == .ledger ? path(sample.path) : String(path(sample.path, ledger: 0).dropFirst("/ledgers/0".count))
        for token in [owner, pinned] {
            let victimPath = "/ledgers/\(b)\(rest)", nowherePath = "/ledgers/987654\(rest)"
            let probe = try await app.request(route.method, victimPath, json: sample.body, headers: bearer(token) + contentType(sample))
            let nowhere = try await app.request(route.method, nowherePath, json: sample.body, headers: bearer(token) + contentType(sample))
            if probe.status != 404 || probe.body != nowhere.body {
                leak(
                    "\(route.method) \(victimPath) as A's member: \(probe.status) \(probe.text.prefix(200)); a ledger nowhere: \(nowhere.status) \(nowhere.text.prefix(100))"
                )
            }
        }
    }

    func contentType(_ sample: LedgerIsolationTests.Sample) -> [(String, String)] {
        sample.contentType.map { [("Content-Type", $0)] } ?? []
    }

    /// A viewer (pinned to A and not, under /ledgers/A) and a read token: reads answer as the owner's, writes 403.
    func checkReaders(_ route: RouteCase) async throws {
        guard route.kind == .ledger || route.kind == .ledgerAdmin else { return }
        let sample = route.sample
        let samplePath = path(sample.path)
        let readers: [(String, String, Bool)] =
            route.kind == .ledger
            ? [
                ("viewer under /ledgers/A", viewer, true), ("viewer pinned to A", viewerPinned, false),
                ("read token", readOnly, false), ("read token under /ledgers/A", readOnly, true),
            ]
            : [("viewer", viewer, false), ("read token", readOnly, false)]
        for (name, token, scoped) in readers {
            let answer = try await send(route.method, samplePath, sample.body, token: token, scoped: scoped, contentType: sample.contentType)
            let reference = route.method == "GET" ? try await send("GET", samplePath, token: owner, scoped: scoped) : nil
            if let reference {
                let comparable =
                    route.kind == .ledger
                    && !(route.pattern == "/ledgers/:ledger")
                if comparable, answer.status != reference.status || answer.body != reference.body {
                    leak("GET \(samplePath) as \(name): \(answer.status), the owner reads \(reference.status)")
                } else if answer.status != 200 {
                    leak("GET \(samplePath) as \(name): \(answer.status)")
                }
            } else if answer.status != 403 {
                leak("\(route.method) \(samplePath) as \(name): \(answer.status), not 403 \(answer.text.prefix(150))")
            }
        }
    }

    /// No token: 401 with a Bearer challenge on every route but the open ones.
    func checkNoToken(_ route: RouteCase) async throws {
        guard route.kind != .open else { return }
        let sample = route.sample
        var paths = [path(sample.path)]
        if route.kind == .ledger { paths.append("/ledgers/\(a)" + path(sample.path)) }
        for target in paths {
            let answer = try await app.request(route.method, target, json: sample.body, headers: contentType(sample))
            if answer.status != 401 || answer.header("WWW-Authenticate") == nil {
                leak("\(route.method) \(target) without a token: \(answer.status)")
            }
        }
    }

    // MARK: Writes

    /// The route answers as for a record that does not exist: 404 (or 422 where a body names it); never a
    /// write. `method path` names an id only B has.
    func expectAbsent(_ method: String, _ rawPath: String, _ body: String?) async throws {
        let answer = try await attack(method, rawPath, body)
        if answer.status != 404 && answer.status != 422 {
            leak("\(method) \(rawPath) (an id only B has) as A: \(answer.status) \(answer.text.prefix(200))")
        }
    }

    /// A body naming a category only B has (6): 422, the category does not exist for A.
    func expectUnknownCategory(_ method: String, _ rawPath: String, _ body: String) async throws {
        let answer = try await attack(method, rawPath, body)
        if answer.status != 422 {
            leak("\(method) \(rawPath) naming B's category 6 as A: \(answer.status) \(answer.text.prefix(200))")
        }
    }

    /// A create under an id only B has: created in A (201).
    func expectCreated(_ method: String, _ rawPath: String, _ body: String, headers: [(String, String)] = []) async throws -> TestResponse {
        let answer = try await attack(method, rawPath, body, headers: headers)
        if answer.status != 201 {
            leak("\(method) \(rawPath) (an id or key only B has) as A: \(answer.status), not 201: \(answer.text.prefix(200))")
        }
        return answer
    }

    func attackIdempotent(_ path: String, _ template: String, key baseKey: String) async throws {
        for variant in [variants()[0], variants()[1]] {
            let key = "\"\(baseKey)\(variant.scoped ? "-scoped" : "")\""
            let body = template.replacingOccurrences(of: "{v}", with: variant.scoped ? " scoped" : "")
            let first = try await send("POST", path, body, token: variant.token, scoped: variant.scoped, headers: [("Idempotency-Key", key)])
            if first.status != 201 || first.header("Idempotent-Replayed") != nil {
                leak(
                    "POST \(path) with B's Idempotency-Key \(key) as \(variant): \(first.status) replayed=\(first.header("Idempotent-Replayed") ?? "no") \(first.text.prefix(200))"
                )
            }
            // The key works in A: the same request again is A's own answer, replayed.
            let again = try await send("POST", path, body, token: variant.token, scoped: variant.scoped, headers: [("Idempotency-Key", key)])
            if again.body != first.body || again.header("Idempotent-Replayed") == nil {
                leak("A's own replay of \(key) as \(variant): \(again.status) \(again.text.prefix(200))")
            }
        }
    }

    func attackPostCategory() async throws {
        _ = try await expectCreated("POST", "/categories", #"{"id":7,"title":"Seven","amount":7}"#)
        _ = try await expectCreated("POST", "/categories", #"{"title":"Holidays","amount":7}"#)
        try await attackIdempotent("/categories", #"{"title":"Idem A{v}","amount":1}"#, key: "shared-key-1")
    }

    func attackPutCategory() async throws {
        // PUT of an id only B has creates it in A.
        let created = try await attack("PUT", "/categories/12", #"{"title":"Twelve","amount":1}"#)
        if created.status != 201 && created.status != 200 { leak("PUT /categories/12 as A: \(created.status)") }
        // Replacing A's category 1, which B has too, leaves B's.
        let replaced = try await attack("PUT", "/categories/1", #"{"title":"Food","amount":111}"#)
        if replaced.status != 200 { leak("PUT /categories/1 as A: \(replaced.status) \(replaced.text.prefix(200))") }
    }

    func attackDeleteCategory() async throws {
        try await expectAbsent("DELETE", "/categories/6", nil)
        // A's category 2 and its transactions; B's category 2 (same id, same title) stays.
        let deleted = try await attack("DELETE", "/categories/2", nil)
        if deleted.status != 204 && deleted.status != 200 { leak("DELETE /categories/2 as A: \(deleted.status)") }
    }

    func attackMonthBudget() async throws {
        let answer = try await attack("PUT", "/categories/6/budgets/\(LedgerIsolationTests.month)", #"{"amount":5}"#)
        if answer.status != 404 && answer.status != 422 { leak("PUT /categories/6/budgets/… (B's category) as A: \(answer.status)") }
        let own = try await attack("PUT", "/categories/1/budgets/\(LedgerIsolationTests.month)", #"{"amount":55}"#)
        if !(200..<300).contains(own.status) { leak("PUT /categories/1/budgets/… as A: \(own.status) \(own.text.prefix(200))") }
    }

    func attackPostTransaction() async throws {
        try await expectUnknownCategory("POST", "/transactions", #"{"categoryId":6,"title":"V","amount":"-1.00","date":"2026-11-03"}"#)
        // An import id only B has is free in A; one both have is A's (409 naming A's record).
        _ = try await expectCreated("POST", "/transactions", #"{"categoryId":1,"title":"V","amount":"-1.00","date":"2026-11-03","importId":"imp-9"}"#)
        let taken = try await attack(
            "POST", "/transactions", #"{"categoryId":1,"title":"V","amount":"-1.00","date":"2026-11-03","importId":"imp-1"}"#)
        if taken.status != 409 || taken.header("Location")?.hasSuffix("/transactions/1") != true {
            leak("POST /transactions with importId imp-1 as A: \(taken.status) Location \(taken.header("Location") ?? "-")")
        }
        _ = try await expectCreated("POST", "/transactions", #"{"id":8,"categoryId":1,"title":"Eight","amount":"-1.00","date":"2026-11-03"}"#)
        // A key B used for a create written in one statement with it is A's own; with B's category, refused and
        // not kept.
        try await attackIdempotent(
            "/transactions", #"{"categoryId":1,"title":"Idem A{v}","amount":"-1.00","date":"2026-11-03"}"#, key: "shared-key-3")
        let keyed = try await attack(
            "POST", "/transactions", #"{"categoryId":6,"title":"V","amount":"-1.00","date":"2026-11-03"}"#,
            headers: [("Idempotency-Key", "shared-key-3-b-category")])
        if keyed.status != 422 { leak("a keyed POST /transactions naming B's category 6 as A: \(keyed.status) \(keyed.text.prefix(200))") }
        // An array is one INSERT (RecordRoutes.insertedTogether): one naming B's category, by its body or its
        // path, fails it, and the records one by one answer as before, writing nothing into either ledger.
        for variant in variants() {
            let named = try await send(
                "POST", "/transactions",
                #"[{"categoryId":1,"title":"Array A","amount":"-1.00"},{"categoryId":6,"title":"Array A","amount":"-2.00"}]"#,
                token: variant.token, scoped: variant.scoped)
            if named.status != 422 || !named.text.contains(#""field":"categoryId""#) {
                leak("an array create naming B's category as \(variant): \(named.status) \(named.text.prefix(200))")
            }
            for (ownerPath, category) in [("/categories/6/transactions", ""), ("/accounts/6/transactions", #""categoryId":1,"#)] {
                let under = try await send(
                    "POST", ownerPath, #"[{\#(category)"title":"Array A","amount":"-1.00"},{\#(category)"title":"Array A","amount":"-2.00"}]"#,
                    token: variant.token, scoped: variant.scoped)
                if under.status != 404 { leak("an array create under B's \(ownerPath) as \(variant): \(under.status) \(under.text.prefix(200))") }
            }
        }
        let arrayWritten = try await send("GET", "/transactions?title=Array%20A", token: owner)
        if arrayWritten.array.count != 0 { leak("an array create naming B's category wrote \(arrayWritten.array.count) into A") }
        for variant in variants() {
            let created = try await send(
                "POST", "/transactions",
                #"[{"categoryId":1,"title":"Array ok","amount":"-1.00"},{"categoryId":1,"title":"Array ok","amount":"-2.00"}]"#,
                token: variant.token, scoped: variant.scoped)
            if created.status != 201 || created.array.count != 2 {
                leak("an array create in A as \(variant): \(created.status) \(created.text.prefix(200))")
            }
        }
        // A split's part naming B's category.
        try await expectUnknownCategory("POST", "/transactions", Self.splitNamingB)
        try await expectUnknownCategory("POST", "/accounts/1/transactions", Self.splitNamingB)
    }

    /// A split whose second part names a category only B has (6).
    static let splitNamingB =
        #"{"accountId":1,"title":"V","amount":"-2.00","date":"2026-11-03","splits":[{"categoryId":1,"amount":"-1.00"},{"categoryId":6,"amount":"-1.00"}]}"#

    func attackPutTransaction() async throws {
        try await expectUnknownCategory("PUT", "/transactions/1", #"{"categoryId":6,"title":"V","amount":"-1.00","date":"2026-11-03"}"#)
        try await expectUnknownCategory("PUT", "/transactions/4", Self.splitNamingB)
        let created = try await attack("PUT", "/transactions/9", #"{"categoryId":1,"title":"Nine","amount":"-1.00","date":"2026-11-03"}"#)
        if created.status != 201 && created.status != 200 {
            leak("PUT /transactions/9 (id only B has) as A: \(created.status) \(created.text.prefix(200))")
        }
    }

    func attackPatchTransaction() async throws {
        try await expectUnknownCategory("PATCH", "/transactions/1", #"{"categoryId":6}"#)
        try await expectAbsent("PATCH", "/transactions/10", #"{"title":"V"}"#)
        try await expectUnknownCategory(
            "PATCH", "/transactions/4", #"{"splits":[{"categoryId":1,"amount":"-1000.00"},{"categoryId":6,"amount":"-1000.00"}]}"#)
        // B's split and its part: absent for A.
        try await expectAbsent("PATCH", "/transactions/12", #"{"splits":[{"categoryId":1,"amount":"-10.00"},{"categoryId":1,"amount":"-10.00"}]}"#)
        try await expectAbsent("PATCH", "/transactions/13", #"{"note":"V"}"#)
        let own = try await attack("PATCH", "/transactions/1", #"{"note":"patched"}"#)
        if own.status != 200 { leak("PATCH /transactions/1 as A: \(own.status)") }
    }

    func attackImport() async throws {
        let byTitle = "date,title,amount,category\n2026-11-03,V,-1.00,Travel\n"
        let byID = "date,title,amount,category\n2026-11-03,V,-1.00,6\n"
        for statement in [byTitle, byID] {
            for dry in ["", "?dryRun=true"] {
                let answer = try await attack("POST", "/transactions/import\(dry)", statement, contentType: "text/csv")
                if answer.status != 422 {
                    leak(
                        "import naming B's category (\(statement.split(separator: "\n")[1])) \(dry) as A: \(answer.status) \(answer.text.prefix(200))"
                    )
                }
            }
        }
        let statement = "date,title,amount,category,importId\n2026-11-03,V,-1.00,Food,imp-8\n2026-11-03,W,-1.00,Food,imp-1\n"
        let dry = try await attack("POST", "/transactions/import?dryRun=true", statement, contentType: "text/csv")
        if dry.status != 200 || dry.object["created"] as? Int != 1 || dry.object["duplicateImportIds"] as? [String] != ["imp-1"] {
            leak("import dry run of imp-8 (B's) and imp-1 (both) as A: \(dry.status) \(dry.text.prefix(300))")
        }
        let real = try await attack("POST", "/transactions/import", statement, contentType: "text/csv")
        if !(200..<300).contains(real.status) { leak("import as A: \(real.status) \(real.text.prefix(300))") }
        let count = try await send("GET", "/transactions?importId=imp-8", token: owner)
        if count.array.count != 1 { leak("after importing imp-8 (B's import id) A has \(count.array.count) such transactions") }
    }

    /// Account ids and names only B has are free in A.
    func attackPostAccount() async throws {
        _ = try await expectCreated("POST", "/accounts", #"{"id":7,"name":"Seven","type":"cash"}"#)
        _ = try await expectCreated("POST", "/accounts", #"{"name":"Savings","type":"savings"}"#)
    }

    func attackPutAccount() async throws {
        let created = try await attack("PUT", "/accounts/5", #"{"name":"Five","type":"cash"}"#)
        if created.status != 201 && created.status != 200 {
            leak("PUT /accounts/5 (id only B has) as A: \(created.status) \(created.text.prefix(200))")
        }
    }

    /// B's account 6, named by the path or a body, does not exist for A.
    func attackPostAccountTransaction() async throws {
        try await expectAbsent("POST", "/accounts/6/transactions", #"{"title":"V","amount":"1.00","date":"2026-11-03"}"#)
        for path in ["/transactions", "/categories/1/transactions"] {
            let answer = try await attack("POST", path, #"{"accountId":6,"categoryId":1,"title":"V","amount":"1.00","date":"2026-11-03"}"#)
            if answer.status != 422 { leak("POST \(path) naming B's account 6 as A: \(answer.status) \(answer.text.prefix(200))") }
        }
        try await expectUnknownCategory("PATCH", "/transactions/4", #"{"accountId":6}"#)
    }

    /// Importing into B's account 6, by path or parameter, is refused; an import id only B's account has is free in A's.
    func attackAccountImport() async throws {
        let statement = "date,title,amount,importId\n2026-11-05,V,-1.00,imp-11\n"
        for (path, expected) in [
            ("/accounts/6/transactions/import", 404), ("/transactions/import?accountId=6", 422),
            ("/accounts/6/transactions/import?dryRun=true", 404),
        ] {
            let answer = try await attack("POST", path, statement, contentType: "text/csv")
            if answer.status != expected { leak("import into B's account (\(path)) as A: \(answer.status) \(answer.text.prefix(200))") }
        }
        let own = try await attack("POST", "/accounts/1/transactions/import", statement, contentType: "text/csv")
        if own.status != 201 || own.object["created"] as? Int != 1 {
            leak("import of imp-11 (B's) into A's account 1: \(own.status) \(own.text.prefix(200))")
        }
    }

    /// A transfer naming B's accounts, on either side, is 422 on that side: they do not exist for A.
    func attackTransfer() async throws {
        for (body, fields) in [
            (#"{"fromAccountId":5,"toAccountId":6,"amount":1}"#, ["fromAccountId", "toAccountId"]),
            (#"{"fromAccountId":1,"toAccountId":6,"amount":1}"#, ["toAccountId"]),
            (#"{"fromAccountId":7,"toAccountId":1,"amount":1,"categoryId":1}"#, ["fromAccountId"]),
        ] {
            let answer = try await attack("POST", "/transfers", body)
            if answer.status != 422 || answer.problemFields != fields {
                leak("POST /transfers \(body) (B's accounts) as A: \(answer.status) \(answer.text.prefix(200))")
            }
        }
    }

    /// Reconciling B's account, even with adjust, is the 404 of an account that does not exist; A's own reconciles.
    func attackReconcile() async throws {
        try await expectAbsent("POST", "/accounts/6/reconcile", #"{"balance":"0.00","date":"2026-11-30","adjust":true}"#)
        let own = try await attack("POST", "/accounts/1/reconcile", #"{"balance":"100.00","date":"2026-09-30"}"#)
        if own.status != 200 { leak("POST /accounts/1/reconcile (A's account) as A: \(own.status) \(own.text.prefix(200))") }
    }

    /// A schedule naming B's account 6, category 6 or (in a part) category 7 is 422; B's schedule ids are free in A.
    func attackPostSchedule() async throws {
        for body in [
            #"{"title":"V","amount":1,"accountId":6,"frequency":"monthly"}"#,
            #"{"title":"V","amount":1,"categoryId":6,"frequency":"monthly"}"#,
            #"{"title":"V","amount":3,"splits":[{"categoryId":1,"amount":1},{"categoryId":7,"amount":2}],"frequency":"monthly"}"#,
        ] {
            let answer = try await attack("POST", "/schedules", body)
            if answer.status != 422 { leak("POST /schedules \(body) (B's account or category) as A: \(answer.status) \(answer.text.prefix(200))") }
        }
        _ = try await expectCreated(
            "POST", "/schedules", #"{"id":7,"title":"Seven","amount":1,"categoryId":1,"frequency":"once","firstDate":"2099-01-01"}"#)
    }

    func attackPutSchedule() async throws {
        try await expectUnknownCategory("PUT", "/schedules/1", #"{"title":"V","amount":1,"categoryId":6,"frequency":"monthly"}"#)
        let created = try await attack(
            "PUT", "/schedules/5", #"{"title":"Five","amount":1,"categoryId":1,"frequency":"once","firstDate":"2099-01-01"}"#)
        if created.status != 201 { leak("PUT /schedules/5 (id only B has) as A: \(created.status) \(created.text.prefix(200))") }
    }

    func attackPatchSchedule() async throws {
        try await expectAbsent("PATCH", "/schedules/6", #"{"title":"V"}"#)
        for body in [#"{"accountId":6}"#, #"{"splits":[{"categoryId":6,"amount":450},{"categoryId":1,"amount":450}]}"#] {
            let answer = try await attack("PATCH", "/schedules/1", body)
            if answer.status != 422 { leak("PATCH /schedules/1 \(body) (B's account or category) as A: \(answer.status) \(answer.text.prefix(200))") }
        }
    }

    func attackPostBudget() async throws {
        try await expectUnknownCategory("POST", "/budgets", #"{"categoryId":6,"month":"2026-12","amount":1}"#)
        _ = try await expectCreated("POST", "/budgets", #"{"id":6,"categoryId":1,"month":"2027-01","amount":1}"#)
    }

    func attackPutBudget() async throws {
        try await expectUnknownCategory("PUT", "/budgets/1", #"{"categoryId":6,"month":"2026-11","amount":1}"#)
        let created = try await attack("PUT", "/budgets/16", #"{"categoryId":1,"month":"2027-02","amount":1}"#)
        if created.status != 201 && created.status != 200 { leak("PUT /budgets/16 as A: \(created.status) \(created.text.prefix(200))") }
    }

    func attackPostDocument() async throws {
        _ = try await expectCreated("POST", "/posts", #"{"id":5,"title":"A's five"}"#)
        // A collection only B has does not exist for A: as for a name nowhere, 404 (a POST creates no collection).
        let secret = try await attack("POST", "/secrets", #"{"text":"A's own secret"}"#)
        let nowhere = try await send("POST", "/nowhere", #"{"text":"A's own secret"}"#, token: owner)
        if secret.status != nowhere.status { leak("POST /secrets (B's collection) as A: \(secret.status), a name nowhere: \(nowhere.status)") }
        try await attackIdempotent("/posts", #"{"title":"idem post A{v}"}"#, key: "shared-key-2")
        _ = try await expectCreated("POST", "/comments", #"{"id":4,"postId":6,"text":"on six"}"#)
    }

    func attackSingular(_ method: String) async throws {
        let answer = try await attack(method, "/profile", #"{"name":"A's profile \#(method)"}"#)
        if !(200..<300).contains(answer.status) { leak("\(method) /profile as A: \(answer.status) \(answer.text.prefix(200))") }
    }

    func attackPutDocument() async throws {
        let answer = try await attack("PUT", "/posts/6", #"{"title":"A's six"}"#)
        if answer.status != 404 && answer.status != 201 && answer.status != 200 { leak("PUT /posts/6 (B's id) as A: \(answer.status)") }
        let own = try await attack("PUT", "/posts/1", #"{"title":"Hello again"}"#)
        if own.status != 200 { leak("PUT /posts/1 as A: \(own.status) \(own.text.prefix(200))") }
    }

    func attackDeleteDocument() async throws {
        try await expectAbsent("DELETE", "/secrets/1", nil)
        try await expectAbsent("DELETE", "/comments/2", nil)
        try await expectAbsent("DELETE", "/posts/8", nil)
        // A's post 5 (created above) with what refers to it; B's post 5 and its comment 2 (postId 5) stay.
        let deleted = try await attack("DELETE", "/posts/5", nil)
        if !(200..<300).contains(deleted.status) { leak("DELETE /posts/5 as A: \(deleted.status)") }
    }

    func attackNestedPost() async throws {
        let answer = try await attack("POST", "/secrets/1/comments", #"{"text":"x"}"#)
        if answer.status != 404 && answer.status != 201 { leak("POST /secrets/1/comments as A: \(answer.status)") }
        _ = try await expectCreated("POST", "/posts/1/comments", #"{"id":2,"text":"A's second"}"#)
    }

    func attackBatch() async throws {
        let other = "/ledgers/\(b)"
        let body = #"""
            {"atomic":false,"operations":[
             {"method":"POST","path":"\#(other)/categories","body":{"title":"Into B","amount":1}},
             {"method":"DELETE","path":"\#(other)/posts/1"},
             {"method":"PATCH","path":"/categories/6","body":{"amount":1}},
             {"method":"DELETE","path":"/secrets/1"},
             {"method":"POST","path":"/transactions","body":{"categoryId":6,"title":"V","amount":"-1.00","date":"2026-11-03"}},
             {"method":"PUT","path":"\#(other)/db","body":{}},
             {"method":"PUT","path":"/db","body":{}}
            ]}
            """#
        let answer = try await attack("POST", "/batch", body)
        let statuses = (answer.object["results"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? Int }
        if answer.status != 200 || statuses.count != 7 || statuses[0] != 404 || statuses[1] != 404 || ![404, 422].contains(statuses[2])
            || statuses[3] != 404 || statuses[4] != 422 || statuses[5] != 404 || statuses[6] != 200
        {
            leak("POST /batch touching B as A: \(answer.status) statuses \(statuses) \(answer.text.prefix(300))")
        }
        let atomic = #"""
            {"atomic":true,"operations":[{"method":"POST","path":"/categories","body":{"title":"Atomic A","amount":1}},
             {"method":"DELETE","path":"\#(other)/categories/1"}]}
            """#
        let refused = try await attack("POST", "/batch", atomic)
        let written = try await send("GET", "/categories?title=Atomic%20A", token: owner)
        if written.array.count != 0 { leak("an atomic batch with an operation on B wrote into A: \(refused.status)") }
        // An atomic batch claims its keys in one statement (IdempotencyQueries.claimAll): a key B stored answers
        // A's operation as A's own, never with B's replay.
        let keyed = #"""
            {"atomic":true,"operations":[{"method":"POST","path":"/categories","body":{"title":"Batch key A","amount":1},
             "idempotencyKey":"shared-batch-key"}]}
            """#
        let claimed = try await attack("POST", "/batch", keyed)
        let result = (claimed.object["results"] as? [[String: Any]])?.first
        let resultHeaders = result?["headers"] as? [String: Any] ?? [:]
        if claimed.status != 200 || result?["status"] as? Int != 201 || resultHeaders["Idempotent-Replayed"] != nil
            || (result?["body"] as? [String: Any])?["title"] as? String != "Batch key A"
        {
            leak("an atomic batch with B's idempotency key as A: \(claimed.status) \(claimed.text.prefix(300))")
        }
        // The batch's PUT /db emptied A: fill it again for the routes after this one.
        let refilled = try await send("PUT", "/db", Self.seed(victim: false), token: owner)
        #expect(refilled.status == 200)
        // An atomic batch writes a run of creates in one INSERT (CombinableCreate): one naming B's category fails
        // the run, that operation answers as it would alone, and nothing of the run lands in either ledger.
        let run = #"""
            {"atomic":true,"operations":[
             {"method":"POST","path":"/transactions","body":{"categoryId":1,"title":"Run A","amount":"-1.00"}},
             {"method":"POST","path":"/transactions","body":{"categoryId":1,"title":"Run A","amount":"-2.00"}},
             {"method":"POST","path":"/transactions","body":{"categoryId":6,"title":"Run A","amount":"-3.00"}},
             {"method":"POST","path":"/categories/6/transactions","body":{"title":"Run A","amount":"-4.00"}}]}
            """#
        let runAnswer = try await attack("POST", "/batch", run)
        let runWritten = try await send("GET", "/transactions?title=Run%20A", token: owner)
        if ![404, 422].contains(runAnswer.status) || runAnswer.object["operation"] as? Int != 2 || runWritten.array.count != 0 {
            leak("an atomic run of creates naming B's category as A: \(runAnswer.status) \(runAnswer.text.prefix(300))")
        }
    }

    func attackReplaceDatabase() async throws {
        let replaced = try await attack("PUT", "/db", Self.seed(victim: false))
        if replaced.status != 200 { leak("PUT /db as A: \(replaced.status) \(replaced.text.prefix(200))") }
        try await victimStillHasItsData()
    }

    func attackLedgerAdmin(_ method: String, _ rawPath: String, _ body: String?) async throws {
        for token in [owner, pinned] {
            let answer = try await send(method, rawPath, body, token: token)
            let nowhere = try await send(method, rawPath.replacingOccurrences(of: "{B}", with: "987654"), body, token: token)
            if answer.status != 404 || answer.body != nowhere.body { leak("\(method) \(path(rawPath)) as A's member: \(answer.status)") }
        }
    }

    func attackRevoke() async throws {
        let answer = try await send("DELETE", "/auth/tokens/\(victimTokenID)", token: owner)
        if answer.status != 404 { leak("DELETE /auth/tokens/{B's token} as A: \(answer.status)") }
        let still = try await app.request("GET", "/categories", headers: bearer(victim))
        if still.status != 200 { leak("B's token after A tried to revoke it: \(still.status)") }
    }

    func attackSignUp() async throws {
        let answer = try await send("POST", "/auth/users", #"{"name":"newcomer","password":"correct horse"}"#, token: nil)
        #expect(answer.status == 201)
        let (token, _) = try await Self.logIn(app, "newcomer")
        for read in ["/categories", "/posts", "/db", "/changes?since=0"] {
            let own = try await send("GET", read, token: token)
            if own.status == 200, own.text.contains("Food") { leak("a new user's empty ledger answers data at \(read)") }
        }
    }

    func attackMint() async throws {
        let wrongLedger = try await send("POST", "/auth/tokens", #"{"name":"attacker","password":"correct horse","ledgerId":\#(b)}"#, token: nil)
        if wrongLedger.status != 422 { leak("logging in pinned to B as A: \(wrongLedger.status)") }
        let minted = try await send("POST", "/auth/tokens", #"{"ledgerId":\#(b)}"#, token: owner)
        if minted.status != 422 && minted.status != 403 { leak("minting a token pinned to B from A's: \(minted.status)") }
        let fromPinned = try await send("POST", "/auth/tokens", #"{}"#, token: pinned)
        if fromPinned.object["ledgerId"] as? Int != a {
            leak("a token minted from one pinned to A is pinned to \(fromPinned.object["ledgerId"] ?? "nothing")")
        }
    }

    func attackCreateLedger() async throws {
        let created = try await send("POST", "/ledgers", #"{"name":"Extra"}"#, token: owner)
        #expect(created.status == 201)
        let refused = try await send("POST", "/ledgers", #"{"name":"Extra"}"#, token: pinned)
        if refused.status != 403 { leak("POST /ledgers with a pinned token: \(refused.status)") }
    }

    // MARK: Token rules

    func checkTokenRules() async throws {
        // A token pinned to A reaches neither B nor, when its user is B's member too, B unscoped.
        let joined = try await app.request("PUT", "/ledgers/\(a)/members/\(victimUser)", json: #"{"role":"editor"}"#, headers: bearer(owner))
        #expect(joined.status == 201)
        let (victimPinnedToA, _) = try await Self.logIn(app, "victim", extra: #","ledgerId":\#(a)"#)
        for read in ["/categories", "/posts", "/db", "/profile", "/transactions?_expand=category"] {
            try await send("GET", read, token: victimPinnedToA)
        }
        let probe = try await app.request("GET", "/ledgers/\(b)/categories", headers: bearer(victimPinnedToA))
        let nowhere = try await app.request("GET", "/ledgers/987654/categories", headers: bearer(victimPinnedToA))
        if probe.status != 404 || probe.body != nowhere.body { leak("a token pinned to A under /ledgers/B: \(probe.status)") }
        // Revoked: 401.
        let (spare, spareID) = try await Self.logIn(app, "attacker")
        #expect(try await app.request("GET", "/categories", headers: bearer(spare)).status == 200)
        #expect(try await app.request("DELETE", "/auth/tokens/\(spareID)", headers: bearer(owner)).status == 204)
        for target in ["/categories", "/ledgers/\(a)/categories", "/ledgers/\(b)/categories"] {
            let answer = try await app.request("GET", target, headers: bearer(spare))
            if answer.status != 401 { leak("a revoked token at \(target): \(answer.status)") }
        }
        // Expired: 401 once its time has passed (a short expiry, then a bounded wait for it).
        let expiring = try await app.request(
            "POST", "/auth/tokens", json: #"{"expiresAt":"\#(Self.instant(secondsFromNow: 2))"}"#, headers: bearer(owner))
        #expect(expiring.status == 201, "\(expiring.text)")
        let token = expiring.object["token"] as? String ?? "none"
        let deadline = ContinuousClock.now + .seconds(15)
        var status = 200
        while status == 200, ContinuousClock.now < deadline {
            status = try await app.request("GET", "/categories", headers: bearer(token)).status
            if status == 200 { try await Task.sleep(for: .milliseconds(200)) }
        }
        if status != 401 { leak("an expired token: \(status)") }
        if try await app.request("GET", "/ledgers/\(b)/categories", headers: bearer(token)).status != 401 {
            leak("an expired token under /ledgers/B is not 401")
        }
    }

    /// The day `days` after today (UTC, the test server's zone), `YYYY-MM-DD`.
    static func day(daysFromNow days: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: Date().addingTimeInterval(days * 24 * 3600))
    }

    static func instant(secondsFromNow seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date().addingTimeInterval(seconds))
    }

    // MARK: B's state

    /// B's rows in SQL, one digest per table (per ledger when the table has a ledger, else the whole table).
    func digest(_ ledger: Int) async throws -> [String: String] {
        var digests: [String: String] = [:]
        let tables = [
            "categories", "accounts", "transactions", "budgets", "schedules", "collections", "documents", "change_log", "change_feed_state",
            "idempotency_keys",
        ]
        for table in tables {
            let keyed =
                try await app.scalar(
                    "SELECT count(*) FROM information_schema.columns WHERE table_name = '\(table)' AND column_name = 'ledger_id'") == "1"
            let filter = keyed ? "WHERE x.ledger_id = \(ledger)" : ""
            digests[table] = try await app.scalar(
                "SELECT count(*) || ':' || md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM \(table) x \(filter)")
        }
        digests["ledger"] = try await app.scalar("SELECT name || version FROM ledgers WHERE id = \(ledger)")
        digests["memberships"] = try await app.scalar(
            "SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM memberships x WHERE ledger_id = \(ledger)")
        return digests
    }

    /// B's feed from the start, as B's owner reads it.
    func victimFeed() async throws -> String {
        let feed = try await app.request("GET", "/ledgers/\(b)/changes?since=0&limit=1000", headers: bearer(victim))
        return "\(feed.status) \(feed.header("X-Sync-Seq") ?? "-") \(feed.text)"
    }

    func victimCatchUp() async throws { try await catchUp(victim) }

    /// `/changes` stamps what committed before it answers: the feed's state settles.
    func catchUp(_ token: String) async throws {
        #expect(try await app.request("GET", "/changes?since=0&limit=1", headers: bearer(token)).status == 200)
    }

    func victimStillHasItsData() async throws {
        let db = try await app.request("GET", "/ledgers/\(b)/db", headers: bearer(victim))
        for canary in ["\(mark) category", "\(mark) note", "\(mark) body", "\(mark) secret", "\(mark) profile", "\(mark) on five"]
        where !db.text.contains(canary) {
            leak("after A's PUT /db, B's /db lacks \"\(canary)\"")
        }
    }

    // MARK: Helpers

    static func signUp(_ app: TestApp, _ name: String) async throws -> Int {
        let response = try await app.request("POST", "/auth/users", json: #"{"name":"\#(name)","password":"correct horse"}"#)
        #expect(response.status == 201, "\(response.text)")
        return try #require(response.object["id"] as? Int)
    }

    static func logIn(_ app: TestApp, _ name: String, extra: String = "") async throws -> (String, Int) {
        let response = try await app.request("POST", "/auth/tokens", json: #"{"name":"\#(name)","password":"correct horse"\#(extra)}"#)
        #expect(response.status == 201, "\(response.text)")
        return (try #require(response.object["token"] as? String), try #require(response.object["id"] as? Int))
    }

    static func defaultLedger(_ app: TestApp, _ token: String) async throws -> Int {
        let me = try await app.request("GET", "/auth/me", headers: bearer(token))
        return try #require(me.object["defaultLedgerId"] as? Int)
    }
}

private func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }
