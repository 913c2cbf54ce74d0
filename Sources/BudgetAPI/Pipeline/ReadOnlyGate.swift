import HTTPServer

/// Refuses every write (but token management) with 403 when the server runs with `--read-only`, as json-server's flag does.
struct ReadOnlyGate: RequestGate {
    func check(_ request: Request) throws {
        // Logging in and revoking tokens write no budget data: a read-only server's users may still do both.
        guard request.method.isSafe || request.route?.hasPrefix(AuthRoutes.tokens) == true else {
            throw Problem(.forbidden, detail: "the server is read-only; \(request.method) is not allowed")
        }
    }
}
