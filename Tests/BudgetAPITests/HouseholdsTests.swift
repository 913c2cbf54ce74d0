import BudgetAPI
import Foundation
import Testing
import TestSupport
import APITestSupport

/// Households (docs/households.md): the `/ledgers/{L}/…` prefix, users, tokens, roles and the token cache, over
/// real sockets and a real PostgreSQL. Password hashes use a low scrypt cost (`passwordCost`), test-only.
@Suite struct HouseholdsTests {
    static func options(signup: Bool = true, apiToken: String? = nil) -> BudgetApp.Options {
        var options = BudgetApp.Options()
        options.signupIsOpen = signup
        options.passwordCost = 10
        options.apiToken = apiToken
        return options
    }

    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    static func signUp(_ app: TestApp, _ name: String, password: String = "correct horse") async throws -> Int {
        let response = try await app.request("POST", "/auth/users", json: #"{"name":"\#(name)","password":"\#(password)"}"#)
        #expect(response.status == 201, "\(response.text)")
        return try #require(response.object["id"] as? Int)
    }

    static func logIn(_ app: TestApp, _ name: String, password: String = "correct horse", extra: String = "") async throws -> (token: String, id: Int)
    {
        let response = try await app.request("POST", "/auth/tokens", json: #"{"name":"\#(name)","password":"\#(password)"\#(extra)}"#)
        #expect(response.status == 201, "\(response.text)")
        return (try #require(response.object["token"] as? String), try #require(response.object["id"] as? Int))
    }

    // MARK: The prefix, without users

    @Test func everyRouteAnswersTheSameUnderLedgerOne() async throws {
        try await TestApp.with(options: Self.options(signup: false)) { app in
            try await app.seed(
                #"{"categories":[{"id":1,"title":"Food","amount":100}],"transactions":[{"id":1,"categoryId":1,"title":"Milk","amount":"5.00","date":"2026-11-02"}],"posts":[{"id":1,"title":"a"}],"comments":[{"id":1,"postId":1}],"profile":{"name":"p"}}"#
            )
            let paths = [
                "/categories", "/categories/1", "/categories/1/transactions", "/transactions?_limit=1", "/db", "/posts", "/posts/1",
                "/posts/1/comments", "/profile", "/months/2026-11", "/reports/spending?from=2026-11&to=2026-11",
                "/changes", "/categories/1/budgets", "/transactions?_page=1&_per_page=1",
            ]
            for path in paths {
                let plain = try await app.request("GET", path)
                let scoped = try await app.request("GET", "/ledgers/1" + path)
                let byDefault = try await app.request("GET", "/ledgers/default" + path)
                #expect(plain.status == 200, "\(path) \(plain.status)")
                #expect(scoped.status == plain.status && scoped.body == plain.body, "\(path)")
                #expect(byDefault.body == plain.body, "\(path)")
                #expect(scoped.header("ETag") == plain.header("ETag"), "\(path)")
                if let link = plain.header("Link") {
                    #expect(scoped.header("Link") != link && scoped.header("Link")!.contains("/ledgers/1/transactions"))
                }
            }
            let created = try await app.request("POST", "/ledgers/1/categories", json: #"{"title":"Rent","amount":5}"#)
            #expect(created.status == 201)
            #expect(created.header("Location")?.hasPrefix("/ledgers/1/categories/") == true)
            let plainCreated = try await app.request("POST", "/categories", json: #"{"title":"Fun","amount":5}"#)
            #expect(plainCreated.header("Location")?.hasPrefix("/categories/") == true)
            let generic = try await app.request("POST", "/ledgers/1/posts", json: #"{"title":"b"}"#)
            #expect(generic.header("Location")?.hasPrefix("/ledgers/1/posts/") == true)
            // Content-Location keeps the prefix too (a reconcile answers the account it changed).
            let account = try await app.request("POST", "/ledgers/1/accounts", json: #"{"name":"Cash","type":"cash"}"#)
            let accountPath = try #require(account.header("Location"))
            let reconciled = try await app.request("POST", accountPath + "/reconcile", json: #"{"balance":0,"date":"2026-11-30"}"#)
            #expect(reconciled.status == 200 && reconciled.header("Content-Location") == accountPath, "\(reconciled.text)")
            for path in [
                "/ledgers/2/categories", "/ledgers/abc/categories", "/ledgers/-1/categories", "/ledgers/99999999999999999999999/categories",
                "/ledgers/1/health", "/ledgers/1/metrics", "/ledgers/1/auth/me", "/ledgers/1/ledgers",
            ] {
                let response = try await app.request("GET", path)
                #expect(response.status == 404, "\(path) \(response.status)")
            }
            let batch = try await app.request(
                "POST", "/ledgers/1/batch",
                json: #"""
                    {"atomic":false,"operations":[{"method":"POST","path":"/ledgers/1/categories","body":{"title":"B1","amount":1}},
                     {"method":"POST","path":"/ledgers/2/categories","body":{"title":"B2","amount":1}},
                     {"method":"POST","path":"/categories","body":{"title":"B3","amount":1}}]}
                    """#)
            #expect(batch.status == 200, "\(batch.text)")
            let statuses = (batch.object["results"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? Int }
            #expect(statuses == [201, 404, 201], "\(batch.text)")
            let metrics = try await app.request("GET", "/metrics")
            #expect(metrics.text.contains(#"route="/ledgers/:ledger/categories""#))
            #expect(!metrics.text.contains(#"route="/ledgers/1"#))
        }
    }

    // MARK: Users, tokens, roles

    @Test func usersTokensAndRoles() async throws {
        try await TestApp.with(options: Self.options()) { app in
            #expect(try await app.request("GET", "/categories").status == 200)
            let alice = try await Self.signUp(app, "Alice")
            // From the first user on, a token is needed but for the open routes.
            let closed = try await app.request("GET", "/categories")
            #expect(closed.status == 401 && closed.header("WWW-Authenticate") == "Bearer")
            #expect(try await app.request("GET", "/health").status == 200)
            #expect(try await app.request("GET", "/ready").status == 200)

            // A wrong password and an unknown name answer alike.
            let wrong = try await app.request("POST", "/auth/tokens", json: #"{"name":"alice","password":"wrong password"}"#)
            let unknown = try await app.request("POST", "/auth/tokens", json: #"{"name":"nobody","password":"wrong password"}"#)
            #expect(wrong.status == 401 && unknown.status == 401)
            #expect(wrong.body == unknown.body)

            let (aliceToken, _) = try await Self.logIn(app, "ALICE")
            let me = try await app.request("GET", "/auth/me", headers: Self.bearer(aliceToken))
            #expect(me.object["id"] as? Int == alice && me.object["defaultLedgerId"] as? Int == 1)
            #expect((me.object["ledgers"] as? [[String: Any]])?.first?["role"] as? String == "owner")
            #expect(
                try await app.request("POST", "/categories", json: #"{"title":"Food","amount":1}"#, headers: Self.bearer(aliceToken)).status == 201)

            // Bad input: 422 naming the member, 409 for a taken name; nothing written.
            let short = try await app.request("POST", "/auth/users", json: #"{"name":"bob","password":"short"}"#)
            #expect(short.status == 422 && short.problemFields == ["password"])
            let empty = try await app.request("POST", "/auth/users", json: #"{"name":"","password":"long enough"}"#)
            #expect(empty.status == 422 && empty.problemFields == ["name"])
            let taken = try await app.request("POST", "/auth/users", json: #"{"name":"aLiCe","password":"long enough"}"#)
            #expect(taken.status == 409)
            #expect(try await app.scalar("SELECT count(*) FROM users") == "1")

            // A later user gets an empty ledger of their own and cannot see ledger 1.
            let bob = try await Self.signUp(app, "Bob")
            let (bobToken, _) = try await Self.logIn(app, "bob")
            let bobsOwn = try await app.request("GET", "/categories", headers: Self.bearer(bobToken))
            #expect(bobsOwn.status == 200)
            let hidden = try await app.request("GET", "/ledgers/1/categories", headers: Self.bearer(bobToken))
            let absent = try await app.request("GET", "/ledgers/999/categories", headers: Self.bearer(bobToken))
            #expect(hidden.status == 404 && absent.status == 404 && hidden.body == absent.body)
            let ledgers = try await app.request("GET", "/ledgers", headers: Self.bearer(bobToken))
            let bobLedger = try #require(ledgers.array.first?["id"] as? Int)
            #expect(bobLedger != 1 && ledgers.array.count == 1)

            // Members: 201 added, 200 changed; a viewer reads and may not write; an editor may not manage members.
            let added = try await app.request("PUT", "/ledgers/1/members/\(bob)", json: #"{"role":"viewer"}"#, headers: Self.bearer(aliceToken))
            #expect(added.status == 201, "\(added.text)")
            #expect(try await app.request("GET", "/ledgers/1/categories", headers: Self.bearer(bobToken)).status == 200)
            let viewerWrite = try await app.request(
                "POST", "/ledgers/1/categories", json: #"{"title":"X","amount":1}"#, headers: Self.bearer(bobToken))
            #expect(viewerWrite.status == 403)
            let changed = try await app.request("PUT", "/ledgers/1/members/\(bob)", json: #"{"role":"editor"}"#, headers: Self.bearer(aliceToken))
            #expect(changed.status == 200)
            #expect(
                try await app.request("POST", "/ledgers/1/categories", json: #"{"title":"Y","amount":1}"#, headers: Self.bearer(bobToken)).status
                    == 201)
            #expect(
                try await app.request("PUT", "/ledgers/1/members/\(alice)", json: #"{"role":"viewer"}"#, headers: Self.bearer(bobToken)).status == 403
            )
            #expect(try await app.request("DELETE", "/ledgers/1", headers: Self.bearer(bobToken)).status == 403)
            let badRole = try await app.request("PUT", "/ledgers/1/members/\(bob)", json: #"{"role":"king"}"#, headers: Self.bearer(aliceToken))
            #expect(badRole.status == 422 && badRole.problemFields == ["role"])
            // The last owner can be neither demoted nor removed.
            let demote = try await app.request("PUT", "/ledgers/1/members/\(alice)", json: #"{"role":"editor"}"#, headers: Self.bearer(aliceToken))
            #expect(demote.status == 409, "\(demote.text)")
            #expect(try await app.request("DELETE", "/ledgers/1/members/\(alice)", headers: Self.bearer(aliceToken)).status == 409)
            #expect(try await app.scalar("SELECT role FROM memberships WHERE ledger_id = 1 AND user_id = \(alice)") == "owner")

            // A read token may not write; a pinned token sees no other ledger.
            let (readToken, _) = try await Self.logIn(app, "bob", extra: #","scope":"read""#)
            #expect(try await app.request("GET", "/ledgers/1/categories", headers: Self.bearer(readToken)).status == 200)
            #expect(try await app.request("POST", "/categories", json: #"{"title":"Z","amount":1}"#, headers: Self.bearer(readToken)).status == 403)
            let wider = try await app.request("POST", "/auth/tokens", json: #"{"scope":"write"}"#, headers: Self.bearer(readToken))
            #expect(wider.status == 403)
            let (pinned, _) = try await Self.logIn(app, "bob", extra: #","ledgerId":\#(bobLedger)"#)
            #expect(try await app.request("GET", "/ledgers/1/categories", headers: Self.bearer(pinned)).status == 404)
            #expect(try await app.request("GET", "/categories", headers: Self.bearer(pinned)).status == 200)
            let pinnedList = try await app.request("GET", "/ledgers", headers: Self.bearer(pinned))
            #expect(pinnedList.array.count == 1)

            // Minting from a token: same user, never wider; listing never shows a secret; revoking ends it.
            let minted = try await app.request("POST", "/auth/tokens", json: #"{"tokenName":"phone"}"#, headers: Self.bearer(pinned))
            #expect(minted.status == 201 && minted.object["ledgerId"] as? Int == bobLedger)
            let list = try await app.request("GET", "/auth/tokens", headers: Self.bearer(bobToken))
            #expect(list.status == 200 && list.array.count == 4 && !list.text.contains(bobToken) && list.array.allSatisfy { $0["token"] == nil })
            let mintedID = try #require(minted.object["id"] as? Int)
            #expect(try await app.request("DELETE", "/auth/tokens/\(mintedID)", headers: Self.bearer(bobToken)).status == 204)
            let revoked = try await app.request("GET", "/categories", headers: Self.bearer(try #require(minted.object["token"] as? String)))
            #expect(revoked.status == 401)

            // A member leaves; an owner deletes a ledger.
            #expect(try await app.request("DELETE", "/ledgers/1/members/\(bob)", headers: Self.bearer(bobToken)).status == 204)
            #expect(try await app.request("GET", "/ledgers/1/categories", headers: Self.bearer(bobToken)).status == 404)
            let made = try await app.request("POST", "/ledgers", json: #"{"name":"Holiday"}"#, headers: Self.bearer(bobToken))
            #expect(made.status == 201 && made.header("Location") == "/ledgers/\(made.object["id"] as? Int ?? 0)")
            #expect(try await app.request("DELETE", made.header("Location") ?? "/", headers: Self.bearer(bobToken)).status == 204)
        }
    }

    @Test func malformedCredentialsAndLedgerIdsAreNever500() async throws {
        try await TestApp.with(options: Self.options()) { app in
            _ = try await Self.signUp(app, "carol")
            let (token, _) = try await Self.logIn(app, "carol")
            let headers: [[(String, String)]] = [
                [("Authorization", "Bearer")], [("Authorization", "Bearer a b")], [("Authorization", "Basic abc")],
                [("Authorization", "Bearer \(token)"), ("Authorization", "Bearer \(token)")], [("Authorization", "Bearer ~~~~")],
                [("Authorization", "Bearer " + String(repeating: "A", count: 4000))], [("Authorization", "bearer \(token)x")],
            ]
            for header in headers {
                let response = try await app.request("GET", "/categories", headers: header)
                #expect(response.status == 401, "\(header.map(\.1).joined().prefix(30)): \(response.status)")
            }
            for ledger in ["abc", "0", "-5", "1.5", "99999999999999999999", "%00", "default2"] {
                let response = try await app.request("GET", "/ledgers/\(ledger)/categories", headers: Self.bearer(token))
                #expect(response.status == 404 || response.status == 400, "\(ledger): \(response.status)")
            }
            for path in ["/ledgers/abc", "/ledgers/abc/members", "/ledgers/1/members/abc"] {
                let response = try await app.request("GET", path, headers: Self.bearer(token))
                #expect(response.status < 500, "\(path): \(response.status)")
            }
        }
    }

    /// Server-assigned ids of every ledger come from one sequence per table: a user may not choose an id that
    /// would move it out of reach (docs/households.md); without users any positive id is still taken.
    @Test func usersChooseIdsUpToTwoToThe53MinusOne() async throws {
        try await TestApp.with(options: Self.options()) { app in
            let open = try await app.request("PUT", "/categories/9007199254740993", json: #"{"title":"Far","amount":1}"#)
            #expect(open.status == 201, "no users yet: \(open.text)")
            _ = try await Self.signUp(app, "Alice")
            let token = try await Self.logIn(app, "Alice").token
            for (method, path, body) in [
                ("POST", "/categories", #"{"id":9007199254740992,"title":"Too far","amount":1}"#),
                ("PUT", "/categories/9007199254740992", #"{"title":"Too far","amount":1}"#),
                (
                    "POST", "/transactions",
                    #"[{"categoryId":1,"title":"ok","amount":1,"date":"2026-11-01"},{"id":9223372036854775807,"categoryId":1,"title":"x","amount":1,"date":"2026-11-01"}]"#
                ),
            ] {
                let response = try await app.request(method, path, json: body, headers: Self.bearer(token))
                #expect(response.status == 422, "\(method) \(path): \(response.text)")
                #expect(response.text.contains("9007199254740991"), "\(response.text)")
            }
            #expect(try await app.scalar("SELECT count(*) FROM categories WHERE title = 'Too far'") == "0")
            let largest = try await app.request(
                "PUT", "/categories/9007199254740991", json: #"{"title":"Largest","amount":1}"#, headers: Self.bearer(token))
            #expect(largest.status == 201, "\(largest.text)")
        }
    }

    /// A method a route does not have is 405 with `Allow` before any token is asked for, on open routes too;
    /// a route that exists with a method it has still needs the token.
    @Test func aMethodNoRouteHasIs405BeforeAnyToken() async throws {
        try await TestApp.with(options: Self.options(signup: false, apiToken: "operator-secret")) { app in
            for (method, path) in [("TRACE", "/auth/users"), ("PUT", "/auth/tokens"), ("DELETE", "/health"), ("PATCH", "/categories")] {
                let response = try await app.request(method, path)
                #expect(response.status == 405, "\(method) \(path): \(response.text)")
                #expect(response.header("Allow") != nil, "\(method) \(path)")
            }
            #expect(try await app.request("GET", "/categories").status == 401)
            #expect(try await app.request("POST", "/auth/users", json: #"{"name":"x","password":"long enough"}"#).status == 401)
        }
    }

    @Test func tenFailedLoginsAre429() async throws {
        try await TestApp.with(options: Self.options()) { app in
            _ = try await Self.signUp(app, "dave")
            for _ in 0..<10 {
                let wrong = try await app.request("POST", "/auth/tokens", json: #"{"name":"dave","password":"not it at all"}"#)
                #expect(wrong.status == 401)
            }
            let throttled = try await app.request("POST", "/auth/tokens", json: #"{"name":"dave","password":"correct horse"}"#)
            #expect(throttled.status == 429)
            #expect(Int(throttled.header("Retry-After") ?? "") ?? 0 > 0)
        }
    }

    @Test func closedSignupIs403AndTheAPITokenStillWorks() async throws {
        try await TestApp.with(options: Self.options(signup: false, apiToken: "operator-token")) { app in
            let refused = try await app.request("POST", "/auth/users", json: #"{"name":"eve","password":"long enough"}"#)
            #expect(refused.status == 401)
            let withToken = try await app.request(
                "POST", "/auth/users", json: #"{"name":"eve","password":"long enough"}"#,
                headers: Self.bearer("operator-token"))
            #expect(withToken.status == 403)
            #expect(try await app.request("GET", "/ledgers/1/categories", headers: Self.bearer("operator-token")).status == 200)
            #expect(try await app.request("GET", "/ledgers/2/categories", headers: Self.bearer("operator-token")).status == 404)
        }
    }

    /// A token revoked through one server process is refused by another on the same database within about a
    /// second (a `budget_auth` notification drops its cache), without a fixed sleep.
    @Test func aRevokedTokenIsRefusedByAnotherProcess() async throws {
        try await TestApp.with(options: Self.options(), poolConfiguration: TestApp.smallPool) { first in
            try await TestApp.with(databaseURL: first.databaseURL, options: Self.options(), poolConfiguration: TestApp.smallPool) { second in
                _ = try await Self.signUp(first, "frank")
                let (token, id) = try await Self.logIn(first, "frank")
                #expect(try await second.request("GET", "/categories", headers: Self.bearer(token)).status == 200)
                #expect(try await second.request("GET", "/categories", headers: Self.bearer(token)).status == 200)
                #expect(try await first.request("DELETE", "/auth/tokens/\(id)", headers: Self.bearer(token)).status == 204)
                let revokedAt = ContinuousClock.now
                var status = 200
                while status == 200, ContinuousClock.now - revokedAt < .seconds(3) {
                    status = try await second.request("GET", "/categories", headers: Self.bearer(token)).status
                }
                #expect(status == 401)
                #expect(ContinuousClock.now - revokedAt < .seconds(2))
            }
        }
    }
}
