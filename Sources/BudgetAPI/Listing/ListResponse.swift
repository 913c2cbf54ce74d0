import HTTPServer

/// How a list answer carries its pagination: `X-Total-Count`, json-server 0.17's `Link`, or the 1.x envelope.
///
/// Pure functions over counts and bytes; the records arrive as JSON bytes (from PostgreSQL or `PlainRecord`)
/// and are never decoded here.
enum ListResponse {
    /// The headers of a list answer: `X-Total-Count` whenever the list is paginated (0.17 sends it for `_page`,
    /// `_start`/`_end` and `_limit`), and `Link` for `_page` when the records span several pages.
    static func headers(total: Int, pagination: Pagination, url: PageURL) -> [(name: String, value: String)] {
        guard pagination != .none else { return [] }
        var headers = [(name: "X-Total-Count", value: "\(total)")]
        if case .page(let number, let size) = pagination, let link = link(total: total, page: number, size: size, url: url) {
            headers.append((name: "Link", value: link))
        }
        return headers
    }

    /// The body of a list answer: the array as PostgreSQL wrote it, or the 1.x envelope around it.
    static func body(total: Int, pagination: Pagination, data: [UInt8]) -> [UInt8] {
        guard case .envelope(let page, let perPage) = pagination else { return data }
        return envelope(total: total, page: page, perPage: perPage, data: data)
    }

    /// json-server 0.17's `Link` for `_page`: first, prev, next, last, as Express's `res.links` writes them.
    ///
    /// Like 0.17's `getPage`, a page with no records, or one holding every record, gets no links at all.
    static func link(total: Int, page: Int, size: Int, url: PageURL) -> String? {
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
    /// `ListPlan.selectPage` clamps its OFFSET, so `data` is the page these numbers describe.
    static func envelope(total: Int, page: Int, perPage: Int, data: [UInt8]) -> [UInt8] {
        let size = max(1, perPage)
        let pages = max(1, (total + size - 1) / size)
        let current = max(1, min(page, pages))
        let prev = current > 1 ? "\(current - 1)" : "null"
        let next = current < pages ? "\(current + 1)" : "null"
        let head = #"{"first":1,"prev":\#(prev),"next":\#(next),"last":\#(pages),"pages":\#(pages),"items":\#(total),"data":"#
        var bytes = Array(head.utf8)
        bytes.reserveCapacity(bytes.count + data.count + 1)
        bytes += data
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

/// The absolute URL of a list request, from which `Link` builds the URLs of other pages.
struct PageURL: Sendable {
    var scheme: String
    /// The host the client addressed; without one the links are relative (path and query only).
    var host: String?
    var path: String
    var query: [(name: String, value: String)]

    init(scheme: String = "http", host: String?, path: String, query: [(name: String, value: String)]) {
        (self.scheme, self.host, self.path, self.query) = (scheme, host, path, query)
    }

    /// The URL of `request` as its client sees it: json-server 0.17's `http://` + Host header + path and
    /// query, or the scheme and host a trusted proxy reported (`Request.origin`).
    init(_ request: Request) {
        self.init(scheme: request.origin.scheme, host: request.origin.host, path: request.path, query: request.query)
    }

    /// This URL with `_page` set to `page`, every other query item kept in place.
    ///
    /// json-server 0.17 replaces the text `page=<current>` in the raw URL; setting the item itself gives the
    /// same links without its accidents (a `_per_page=2` or a value containing `page=` in front of `_page`).
    func replacingPage(with page: Int) -> String {
        let items = query.map { item in item.name == "_page" ? (name: item.name, value: "\(page)") : item }
        let queryText = items.map { Self.encode($0.name) + "=" + Self.encode($0.value) }.joined(separator: "&")
        let origin = host.map { "\(scheme)://\($0)" } ?? ""
        return origin + Self.encode(path, keeping: "/") + (queryText.isEmpty ? "" : "?" + queryText)
    }

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
