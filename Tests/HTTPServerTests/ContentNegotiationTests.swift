import Testing
@testable import HTTPServer

/// `Accept` (RFC 9110 §12.5.1): the offered type with the highest weight, the first one on ties or without
/// a usable `Accept`.
@Suite struct ContentNegotiationTests {
    static let offered = ["application/json", "text/csv"]

    @Test(
        arguments: [
            (nil, "application/json"),
            ("text/csv", "text/csv"),
            ("TEXT/CSV; charset=utf-8", "text/csv"),
            ("application/json, text/csv", "application/json"),
            ("text/csv, application/json", "application/json"),
            ("application/json;q=0.5, text/csv", "text/csv"),
            ("text/*", "text/csv"),
            ("*/*", "application/json"),
            ("*/*;q=0.1, text/csv;q=0.2", "text/csv"),
            ("text/csv;q=0", "application/json"),
            ("text/html", "application/json"),
            ("text/csv;q=2", "application/json"),
            ("garbage", "application/json"),
        ] as [(String?, String)])
    func picksTheBestOfferedType(accept: String?, expected: String) {
        let headers: Headers = accept.map { ["Accept": $0] } ?? Headers()
        let request = Request(method: .get, target: "/report", headers: headers)
        #expect(request.preferredMediaType(among: Self.offered) == expected)
    }

    @Test func readsEveryAcceptField() {
        var headers = Headers()
        headers.add("Accept", "application/json;q=0.1")
        headers.add("Accept", "text/csv")
        #expect(Request(method: .get, target: "/", headers: headers).preferredMediaType(among: Self.offered) == "text/csv")
    }
}
