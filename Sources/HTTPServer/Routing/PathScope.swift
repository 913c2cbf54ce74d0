/// A path prefix that names a scope every route serves, e.g. `/ledgers/7` in `/ledgers/7/categories/1`,
/// resolved before the router so each route is still declared once.
///
/// `/<segment>/<value>/<rest…>` is served as `/<rest…>`, with `value` captured as the path parameter
/// `parameter` and the prefix recorded on the request (`Request.pathPrefix`, `Request.routePrefix`), unless
/// `rest` starts with one of the `keeping` words: those paths are routes of the scope itself
/// (`/ledgers/:ledger/members`), routed as they are. A path with nothing after the value
/// (`/ledgers/7`) is routed as it is too. What the value means, and which routes make no sense under a
/// prefix, is the application's to decide; this type only moves the prefix out of the router's way.
public struct PathScope: Sendable {
    public let segment: String
    public let parameter: String
    public let keeping: Set<String>

    /// The route template the prefix stands for, e.g. `/ledgers/:ledger`: what logs and metrics name
    /// instead of the value, which may be unbounded. Made once: it is longer than a string held inline.
    public let template: String

    public init(segment: String, parameter: String, keeping: Set<String> = []) {
        self.segment = segment
        self.parameter = parameter
        self.keeping = keeping
        template = "/\(segment)/:\(parameter)"
    }

    /// The value and the rest of `path` (starting with `/`) when `path` is scoped, else nil.
    public func split(_ path: String) -> (value: String, prefix: String, rest: String)? {
        let utf8 = path.utf8
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        let afterSlash = utf8.index(after: utf8.startIndex)
        let segmentEnd = utf8.index(afterSlash, offsetBy: segment.utf8.count, limitedBy: utf8.endIndex) ?? utf8.endIndex
        guard utf8[afterSlash..<segmentEnd].elementsEqual(segment.utf8), segmentEnd < utf8.endIndex,
            utf8[segmentEnd] == UInt8(ascii: "/")
        else { return nil }
        let valueStart = utf8.index(after: segmentEnd)
        guard let valueEnd = utf8[valueStart...].firstIndex(of: UInt8(ascii: "/")), valueEnd > valueStart else { return nil }
        let rest = path[valueEnd...]
        let firstRestSegment = rest.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard !keeping.contains(String(firstRestSegment)) else { return nil }
        return (String(path[valueStart..<valueEnd]), String(path[..<valueEnd]), String(rest))
    }

    /// Moves a scoped request's prefix out of its path; answers whether it was scoped. Unscoped requests
    /// are left exactly as they were.
    @discardableResult
    public func apply(to request: inout Request) -> Bool {
        guard let (value, prefix, rest) = split(request.path) else { return false }
        request.path = rest
        request.pathPrefix = prefix
        request.routePrefix = template
        request.parameters.set(parameter, value)
        return true
    }
}

extension Response {
    /// Puts back the prefix `PathScope` moved out of `request`'s path in this answer's `Location` and
    /// `Content-Location`, so the client is sent on under the prefix it used; an unscoped request's answer is
    /// left as it is. The pipeline does it for every answer; an application that answers requests of its own
    /// making (one inside another, say) does it for each of those answers.
    public mutating func keepPrefix(of request: Request) {
        guard !request.pathPrefix.isEmpty else { return }
        for name in ["Location", "Content-Location"] {
            if let location = headers[name], location.hasPrefix("/") {
                headers.replaceOrAdd(name, request.pathPrefix + location)
            }
        }
    }
}
