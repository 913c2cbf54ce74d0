import HTTPServer

/// Refuses every write with 403 when the server runs with `--read-only`, as json-server's flag does.
struct ReadOnlyGate: RequestGate {
    func check(_ request: Request) throws {
        guard request.method.isSafe else {
            throw Problem(.forbidden, detail: "the server is read-only; \(request.method) is not allowed")
        }
    }
}
