import BudgetAPI
import Testing
import APITestSupport

/// `--trust-proxy`: the URLs we generate name the host and scheme the client used only when a proxy is
/// trusted; otherwise `Forwarded` and `X-Forwarded-*` change nothing (docs/operations.md).
@Suite struct ProxyTests {
    /// What a proxy in front of us sends: the client reached `https://api.example.com`; we are `internal:3000`.
    static let proxyHeaders: [(String, String)] = [
        ("Host", "internal:3000"),
        ("Forwarded", "for=192.0.2.60;proto=https;host=api.example.com"),
        ("X-Forwarded-For", "198.51.100.1"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "xf.example.com"),
    ]

    static func options(trustingProxy: Bool) -> BudgetApp.Options {
        var options = BudgetApp.Options()
        options.trustsProxy = trustingProxy
        return options
    }

    static func createCategories(_ app: TestApp, count: Int) async throws {
        for index in 1...count {
            let created = try await app.request("POST", "/categories", json: #"{"title":"C\#(index)","amount":1}"#)
            try #require(created.status == 201)
        }
    }

    /// Without trust the links name the connection's `http://` + Host; with it, the origin `Forwarded` names.
    @Test(arguments: [(false, "http://internal:3000"), (true, "https://api.example.com")])
    func linkNamesTheOriginOnlyATrustedProxyReports(trusts: Bool, origin: String) async throws {
        try await TestApp.with(options: Self.options(trustingProxy: trusts)) { app in
            try await Self.createCategories(app, count: 3)
            let page = try await app.request("GET", "/categories?_page=2&_limit=1", headers: Self.proxyHeaders)
            #expect(
                page.header("Link")
                    == [
                        #"<\#(origin)/categories?_page=1&_limit=1>; rel="first""#,
                        #"<\#(origin)/categories?_page=1&_limit=1>; rel="prev""#,
                        #"<\#(origin)/categories?_page=3&_limit=1>; rel="next""#,
                        #"<\#(origin)/categories?_page=3&_limit=1>; rel="last""#,
                    ].joined(separator: ", "))
            // Location stays a relative reference (RFC 9110 §10.2.2), which the client resolves against the
            // URL it used: already right behind any proxy, with or without trust.
            let created = try await app.request(
                "POST", "/categories", json: #"{"title":"New","amount":1}"#, headers: Self.proxyHeaders)
            #expect(created.header("Location") == "/categories/4")
        }
    }

    @Test func trustedXForwardedHeadersApplyWhenForwardedIsAbsentOrMalformed() async throws {
        try await TestApp.with(options: Self.options(trustingProxy: true)) { app in
            try await app.seed(#"{"posts":[{"id":1},{"id":2},{"id":3}]}"#)
            let xForwarded: [(String, String)] = [
                ("Host", "internal:3000"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "xf.example.com:8443"),
            ]
            for extra in [[], [("Forwarded", "for=192.0.2.60;for=192.0.2.61")]] as [[(String, String)]] {
                let page = try await app.request("GET", "/posts?_page=1&_limit=2", headers: xForwarded + extra)
                #expect(page.status == 200)
                #expect(
                    page.header("Link") == #"<https://xf.example.com:8443/posts?_page=1&_limit=2>; rel="first", "#
                        + #"<https://xf.example.com:8443/posts?_page=2&_limit=2>; rel="next", "#
                        + #"<https://xf.example.com:8443/posts?_page=2&_limit=2>; rel="last""#)
            }
        }
    }

    @Test func trustedButUnusableValuesFallBackToTheConnection() async throws {
        try await TestApp.with(options: Self.options(trustingProxy: true)) { app in
            try await Self.createCategories(app, count: 2)
            let page = try await app.request(
                "GET", "/categories?_page=1&_limit=1",
                headers: [
                    ("Host", "internal:3000"), ("X-Forwarded-Proto", "javascript"), ("X-Forwarded-Host", "evil.example/x>"),
                ])
            #expect(page.status == 200)
            #expect(page.header("Link")?.hasPrefix("<http://internal:3000/categories?") == true)
        }
    }
}
