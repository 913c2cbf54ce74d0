/// How a list answer carries its pagination: `X-Total-Count`, json-server 0.17's `Link`, or the 1.x envelope.
///
/// Pure functions over counts and bytes; the records arrive as JSON bytes (from PostgreSQL or `PlainRecord`)
/// and are never decoded here.
public enum ListResponse {
    /// The headers of a list answer: `X-Total-Count` whenever the list is paginated (0.17 sends it for `_page`,
    /// `_start`/`_end` and `_limit`), and `Link` for `_page` when the records span several pages, or for a
    /// slice that `--max-rows` cut (`limit` then ends it before its own end): `rel="next"`, the rest of it.
    public static func headers(total: Int, pagination: Pagination, limit: Int?, url: PageURL) -> [(name: String, value: String)] {
        guard pagination != .none else { return [] }
        var headers = [(name: "X-Total-Count", value: "\(total)")]
        switch pagination {
        case .page(let number, let size):
            if let link = link(total: total, page: number, size: size, url: url) { headers.append((name: "Link", value: link)) }
        case .slice(let start, let end):
            if let limit, start + limit < min(total, end ?? .max) {
                headers.append((name: "Link", value: "<\(url.replacingSlice(start: start + limit, end: end))>; rel=\"next\""))
            }
        case .none, .envelope:
            break
        }
        return headers
    }

    /// The body of a list answer: the array as PostgreSQL wrote it, or the 1.x envelope around it.
    public static func body(total: Int, pagination: Pagination, data: [UInt8]) -> [UInt8] {
        let (opening, closing) = wrapping(total: total, pagination: pagination)
        guard !opening.isEmpty else { return data }
        return opening + data + closing
    }

    /// What comes before and after the JSON array of records: nothing, or the 1.x envelope's members and `}`.
    public static func wrapping(total: Int, pagination: Pagination) -> (opening: [UInt8], closing: [UInt8]) {
        guard case .envelope(let page, let perPage) = pagination else { return ([], []) }
        return (envelopeHead(total: total, page: page, perPage: perPage), [UInt8(ascii: "}")])
    }

    /// json-server 0.17's `Link` for `_page`: first, prev, next, last, as Express's `res.links` writes them.
    ///
    /// Like 0.17's `getPage`, a page with no records, or one holding every record, gets no links at all.
    public static func link(total: Int, page: Int, size: Int, url: PageURL) -> String? {
        let start = (page - 1) * size
        let end = page * size
        let onPage = max(0, min(total, end) - start)
        guard onPage > 0, onPage != total else { return nil }
        var links: [(rel: String, page: Int)] = [("first", 1)]
        if page > 1 { links.append(("prev", page - 1)) }
        if end < total { links.append(("next", page + 1)) }
        links.append(("last", (total + size - 1) / size))
        return links.map { "<\(url.replacingPage(with: $0.page))>; rel=\"\($0.rel)\"" }.joined(separator: ", ")
    }

    /// json-server 1.x's envelope, `{"first":1,"prev":null,"next":2,"last":5,"pages":5,"items":42,"data":[…]}`.
    ///
    /// The page is clamped into `1…pages` with `pages = max(1, ceil(total / perPage))`, exactly as
    /// `ListPlan.offset(total:)` (and `selectRows` in SQL) clamps its OFFSET, so `data` is the page these numbers describe.
    public static func envelope(total: Int, page: Int, perPage: Int, data: [UInt8]) -> [UInt8] {
        body(total: total, pagination: .envelope(page: page, perPage: perPage), data: data)
    }

    /// The envelope up to its `data` member's value: `{"first":1,…,"items":42,"data":`.
    private static func envelopeHead(total: Int, page: Int, perPage: Int) -> [UInt8] {
        let size = max(1, perPage)
        let pages = max(1, (total + size - 1) / size)
        let current = max(1, min(page, pages))
        let prev = current > 1 ? "\(current - 1)" : "null"
        let next = current < pages ? "\(current + 1)" : "null"
        return Array(#"{"first":1,"prev":\#(prev),"next":\#(next),"last":\#(pages),"pages":\#(pages),"items":\#(total),"data":"#.utf8)
    }
}

/// The absolute URL of a list request, from which `Link` builds the URLs of other pages.
public struct PageURL: Sendable {
    public var scheme: String
    /// The host the client addressed; without one the links are relative (path and query only).
    public var host: String?
    public var path: String
    public var query: [(name: String, value: String)]

    public init(scheme: String = "http", host: String?, path: String, query: [(name: String, value: String)]) {
        (self.scheme, self.host, self.path, self.query) = (scheme, host, path, query)
    }

    /// This URL with `_page` set to `page`, every other query item kept in place.
    ///
    /// json-server 0.17 replaces the text `page=<current>` in the raw URL; setting the item itself gives the
    /// same links without its accidents (a `_per_page=2` or a value containing `page=` in front of `_page`).
    public func replacingPage(with page: Int) -> String {
        text(query: query.map { item in item.name == "_page" ? (name: item.name, value: "\(page)") : item })
    }

    /// This URL with the slice `_start=start` (and `_end=end`) in place of its pagination (`_start`, `_end`,
    /// `_limit`), every other query item kept in place: where a list `--max-rows` cut continues.
    public func replacingSlice(start: Int, end: Int?) -> String {
        var items = query.filter { !["_start", "_end", "_limit"].contains($0.name) }
        items.append((name: "_start", value: "\(start)"))
        if let end { items.append((name: "_end", value: "\(end)")) }
        return text(query: items)
    }

    /// This URL with `items` as its query.
    private func text(query items: [(name: String, value: String)]) -> String {
        let queryText = items.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
        return origin + Self.encode(path, keeping: "/") + (queryText.isEmpty ? "" : "?" + queryText)
    }

    /// The scheme and host links start with, empty when they are relative; part of what a list's weak tag
    /// identifies, since `Link` carries it.
    public var origin: String { host.map { "\(scheme)://\($0)" } ?? "" }

    /// Percent-encodes everything but RFC 3986's unreserved characters, `,` and `:` (common in list queries).
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~,:".utf8)

    static func encode(_ text: String, keeping extra: String = "") -> String {
        let kept = extra.isEmpty ? unreserved : unreserved.union(extra.utf8)
        var result = ""
        for byte in text.utf8 {
            if kept.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
