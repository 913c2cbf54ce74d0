import BudgetAPI
@testable import HTTPServer
import Logging
import Postgres
import Synchronization
import Testing
import TestSupport
import APITestSupport

/// `--api-token` (docs/operations.md, Authentication): a bearer token on every route but the health checks, over a real socket.
///
/// Every app here has the small pool: the whole test run shares one PostgreSQL's max_connections.
@Suite struct AuthTests {
    static let token = "s3cret-Token_1.2~3+4/5=="

    static func options(readOnly: Bool = false) -> BudgetApp.Options {
        var options = BudgetApp.Options()
        options.apiToken = token
        options.isReadOnly = readOnly
        return options
    }

    static let bearer = [("Authorization", "Bearer \(token)")]

    @Test func noTokenIs401WithABareChallenge() async throws {
        try await TestApp.with(options: Self.options(), poolConfiguration: TestApp.smallPool) { app in
            for (method, path) in [
                ("GET", "/categories"), ("GET", "/categories/1"), ("GET", "/changes"), ("GET", "/metrics"), ("GET", "/nowhere/a/b/c"),
            ] {
                let response = try await app.request(method, path)
                #expect(response.status == 401, "\(path)")
                #expect(response.header("WWW-Authenticate") == "Bearer", "\(path)")
                #expect(response.header("Content-Type") == "application/problem+json")
                #expect(response.object["status"] as? Int == 401)
            }
            // Another scheme is no bearer credential at all.
            let basic = try await app.request("GET", "/categories", headers: [("Authorization", "Basic dXNlcjpwYXNz")])
            #expect(basic.status == 401)
            #expect(basic.header("WWW-Authenticate") == "Bearer")
        }
    }

    @Test func wrongTokenIs401WithInvalidToken() async throws {
        try await TestApp.with(options: Self.options(), poolConfiguration: TestApp.smallPool) { app in
            for credential in ["Bearer wrong", "Bearer \(Self.token)x", "Bearer \(Self.token.dropLast())", "Bearer"] {
                let response = try await app.request("GET", "/categories", headers: [("Authorization", credential)])
                #expect(response.status == 401, "\(credential)")
                let challenge = response.header("WWW-Authenticate") ?? ""
                if credential == "Bearer" {
                    #expect(challenge == "Bearer")
                } else {
                    #expect(challenge == #"Bearer error="invalid_token""#, "\(credential)")
                }
            }
            // Two credentials, one of them right: refused, since a proxy may have checked the other.
            let twice = try await app.request("GET", "/categories", headers: [("Authorization", "Bearer wrong")] + Self.bearer)
            #expect(twice.status == 401)
        }
    }

    @Test func rightTokenPasses() async throws {
        try await TestApp.with(options: Self.options(), poolConfiguration: TestApp.smallPool) { app in
            let created = try await app.request("POST", "/categories", json: #"{"title":"Food","amount":10}"#, headers: Self.bearer)
            #expect(created.status == 201)
            let listed = try await app.request("GET", "/categories", headers: Self.bearer)
            #expect(listed.status == 200)
            #expect(listed.array.count == 1)
            // The scheme is case-insensitive (RFC 9110 §11.1); extra spaces around the token are tolerated.
            let lower = try await app.request("GET", "/categories/1", headers: [("Authorization", "bearer   \(Self.token)")])
            #expect(lower.status == 200)
            let metrics = try await app.request("GET", "/metrics", headers: Self.bearer)
            #expect(metrics.status == 200)
        }
    }

    @Test func healthChecksAndPreflightsNeedNoToken() async throws {
        try await TestApp.with(options: Self.options(), poolConfiguration: TestApp.smallPool) { app in
            let health = try await app.request("GET", "/health")
            #expect(health.status == 200)
            let ready = try await app.request("GET", "/ready")
            #expect(ready.status == 200)
            let preflight = try await app.request(
                "OPTIONS", "/categories",
                headers: [
                    ("Origin", "https://app.example"), ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "authorization, content-type"),
                ])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
            #expect(preflight.header("Access-Control-Allow-Headers") == "authorization, content-type")
            // The 401 itself is readable by a browser app on another origin.
            let refused = try await app.request("GET", "/categories", headers: [("Origin", "https://app.example")])
            #expect(refused.status == 401)
            #expect(refused.header("Access-Control-Allow-Origin") == "https://app.example")
        }
    }

    @Test func readOnlyWithTokenIs401BeforeItIs403() async throws {
        try await TestApp.with(options: Self.options(readOnly: true), poolConfiguration: TestApp.smallPool) { app in
            let anonymous = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#)
            #expect(anonymous.status == 401)
            let authorized = try await app.request("POST", "/categories", json: #"{"title":"A","amount":1}"#, headers: Self.bearer)
            #expect(authorized.status == 403)
            let deleted = try await app.request("DELETE", "/categories/1", headers: Self.bearer)
            #expect(deleted.status == 403)
            let read = try await app.request("GET", "/categories", headers: Self.bearer)
            #expect(read.status == 200)
            #expect(try await app.scalar("SELECT count(*) FROM categories") == "0")
        }
    }

    @Test func noTokenConfiguredMeansNoCheck() async throws {
        try await TestApp.with(poolConfiguration: TestApp.smallPool) { app in
            let response = try await app.request("GET", "/categories", headers: [("Authorization", "Bearer anything")])
            #expect(response.status == 200)
        }
    }

    @Test func tokensNeverReachTheLog() async throws {
        let wrong = "wrong-but-also-secret-7f3a"
        let log = LogCapture()
        let url = try await TestDatabase.fresh()
        let pool = ConnectionPool(configuration: TestApp.smallPool(url), logger: log.logger(label: "auth-test"))
        let streamPool = ConnectionPool(
            configuration: BudgetApp.streamPoolConfiguration(for: TestApp.smallPool(url), size: 1), logger: log.logger(label: "auth-test"))
        let migrator = Migrator(migrations: try TestDatabase.migrations(), logger: log.logger(label: "auth-test"))
        let service = BudgetApp.makeService(
            pool: pool, streamPool: streamPool, migrator: migrator, options: Self.options(), logger: log.logger(label: "auth-test"))
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = Server(configuration: configuration, logger: log.logger(label: "auth-test"), handlerForLoop: service.handlerForLoop)
        let port = try server.start()
        let requests: [(String, String, [(String, String)])] = [
            ("GET", "/categories", Self.bearer),
            ("GET", "/categories/404", Self.bearer),
            ("GET", "/categories", [("Authorization", "Bearer \(wrong)")]),
            ("POST", "/categories", [("Authorization", "Bearer \(wrong)")]),
            ("GET", "/categories", []),
        ]
        do {
            for (method, path, headers) in requests {
                _ = try await runOffCooperativePool { try TestClient(port: port).request(method, path, headers: headers) }
            }
            try await waitUntil("every request is logged") { log.lines.count { $0.contains("route=") } >= requests.count }
        } catch {
            service.beginShutdown()
            await server.shutdown(gracePeriod: .seconds(1))
            await streamPool.shutdown()
            await pool.shutdown()
            throw error
        }
        service.beginShutdown()
        await server.shutdown(gracePeriod: .seconds(1))
        await streamPool.shutdown()
        await pool.shutdown()

        let lines = log.lines
        #expect(lines.contains { $0.contains("status=401") })
        #expect(lines.contains { $0.contains("status=200") })
        #expect(!lines.contains { $0.contains(Self.token) || $0.contains(wrong) || $0.contains("Bearer") })
    }

    @Test func tokensCompareInConstantTime() {
        #expect(constantTimeEquals(Array("same token".utf8), Array("same token".utf8)))
        #expect(constantTimeEquals([UInt8](), [UInt8]()))
        #expect(!constantTimeEquals(Array("same token".utf8), Array("same tokem".utf8)))
        #expect(!constantTimeEquals(Array("xame token".utf8), Array("same token".utf8)))
        // A prefix is not a match, whichever side is longer, nor is a tail of zero bytes.
        #expect(!constantTimeEquals(Array("same".utf8), Array("same token".utf8)))
        #expect(!constantTimeEquals(Array("same token".utf8), Array("same".utf8)))
        #expect(!constantTimeEquals([1, 2], [1, 2, 0]))
        #expect(!constantTimeEquals([UInt8](), [0]))

        let gate = BearerTokenGate(token: Self.token)
        #expect(gate.matches(Self.token[...]))
        #expect(!gate.matches(Self.token.dropLast()))
        #expect(!gate.matches(""))
    }

    @Test func bearerCredentialsParse() {
        #expect(BearerTokenGate.bearerToken(in: "Bearer abc") == "abc")
        #expect(BearerTokenGate.bearerToken(in: "BEARER  abc ") == "abc")
        #expect(BearerTokenGate.bearerToken(in: "Bearer") == nil)
        #expect(BearerTokenGate.bearerToken(in: "Bearer   ") == nil)
        #expect(BearerTokenGate.bearerToken(in: "Basic abc") == nil)
        #expect(BearerTokenGate.bearerToken(in: "Bearerabc") == nil)
    }
}
