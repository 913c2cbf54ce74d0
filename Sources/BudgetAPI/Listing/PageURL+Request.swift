import BudgetCore
import HTTPServer

extension PageURL {
    /// The URL of `request` as its client sees it: json-server 0.17's `http://` + Host header + path and
    /// query, or the scheme and host a trusted proxy reported (`Request.origin`).
    init(_ request: Request) {
        self.init(scheme: request.origin.scheme, host: request.origin.host, path: request.pathPrefix + request.path, query: request.query)
    }
}
