@testable import BudgetAPI
@testable import BudgetCore
import HTTPServer
import Testing

@Suite struct ListingResponseTests {
    private static let url = PageURL(host: "localhost:3000", path: "/posts", query: [("_page", "2"), ("_limit", "10"), ("title", "a b")])

    /// json-server 0.17's Link for `_page`, as Express's res.links writes it: first, prev, next, last.
    static let linkTable: [(total: Int, page: Int, size: Int, link: String?)] = [
        (
            42, 2, 10,
            #"<http://localhost:3000/posts?_page=1&_limit=10&title=a%20b>; rel="first", "#
                + #"<http://localhost:3000/posts?_page=1&_limit=10&title=a%20b>; rel="prev", "#
                + #"<http://localhost:3000/posts?_page=3&_limit=10&title=a%20b>; rel="next", "#
                + #"<http://localhost:3000/posts?_page=5&_limit=10&title=a%20b>; rel="last""#
        ),
        (
            42, 1, 10,
            #"<http://localhost:3000/posts?_page=1&_limit=10&title=a%20b>; rel="first", "#
                + #"<http://localhost:3000/posts?_page=2&_limit=10&title=a%20b>; rel="next", "#
                + #"<http://localhost:3000/posts?_page=5&_limit=10&title=a%20b>; rel="last""#
        ),
        (
            42, 5, 10,
            #"<http://localhost:3000/posts?_page=1&_limit=10&title=a%20b>; rel="first", "#
                + #"<http://localhost:3000/posts?_page=4&_limit=10&title=a%20b>; rel="prev", "#
                + #"<http://localhost:3000/posts?_page=5&_limit=10&title=a%20b>; rel="last""#
        ),
        (42, 6, 10, nil),
        (7, 1, 10, nil),
        (0, 1, 10, nil),
    ]

    @Test(arguments: linkTable)
    func linkHeader(_ row: (total: Int, page: Int, size: Int, link: String?)) {
        #expect(ListResponse.link(total: row.total, page: row.page, size: row.size, url: Self.url) == row.link)
    }

    @Test func headersByPagination() {
        #expect(ListResponse.headers(total: 3, pagination: .none, limit: nil, url: Self.url).isEmpty)
        let slice = ListResponse.headers(total: 3, pagination: .slice(start: 0, end: 2), limit: 2, url: Self.url)
        #expect(slice.map(\.name) == ["X-Total-Count"] && slice[0].value == "3")
        let paged = ListResponse.headers(total: 30, pagination: .page(number: 1, size: 10), limit: 10, url: Self.url)
        #expect(paged.map(\.name) == ["X-Total-Count", "Link"])
    }

    /// A slice that `--max-rows` cut before its own end links to the rest of it; one it did not cut does not.
    @Test func aCutSliceLinksToItsRest() {
        let url = PageURL(host: "api.test", path: "/posts", query: [("q", "a"), ("_limit", "50")])
        let cut = ListResponse.headers(total: 30, pagination: .slice(start: 0, end: 50), limit: 10, url: url)
        #expect(cut.map(\.name) == ["X-Total-Count", "Link"])
        #expect(cut.last?.value == #"<http://api.test/posts?q=a&_start=10&_end=50>; rel="next""#)
        let open = ListResponse.headers(total: 30, pagination: .slice(start: 20, end: nil), limit: 10, url: url)
        #expect(open.count == 1, "records 20..<30 are the last ten: nothing to link to")
        let middle = ListResponse.headers(total: 35, pagination: .slice(start: 20, end: nil), limit: 10, url: url)
        #expect(middle.last?.value == #"<http://api.test/posts?q=a&_start=30>; rel="next""#)
        let whole = ListResponse.headers(total: 30, pagination: .slice(start: 0, end: 5), limit: 5, url: url)
        #expect(whole.count == 1, "the slice ends where the client asked it to")
    }

    @Test func linksWithoutHostAreRelativeAndRequestURLIsRead() {
        let relative = PageURL(host: nil, path: "/posts", query: [("_page", "1")])
        #expect(relative.replacingPage(with: 3) == "/posts?_page=3")
        let request = Request(method: .get, target: "/posts?_page=1&author.name=J%C3%BCrgen&x:gt=1", headers: Headers([("Host", "api.test")]))
        #expect(PageURL(request).replacingPage(with: 2) == "http://api.test/posts?_page=2&author.name=J%C3%BCrgen&x:gt=1")
    }

    /// json-server 1.x's envelope and clamping: pages = max(1, ceil(items / perPage)), page into 1…pages.
    static let envelopeTable: [(total: Int, page: Int, perPage: Int, head: String)] = [
        (42, 1, 10, #"{"first":1,"prev":null,"next":2,"last":5,"pages":5,"items":42,"data":"#),
        (42, 3, 10, #"{"first":1,"prev":2,"next":4,"last":5,"pages":5,"items":42,"data":"#),
        (42, 9, 10, #"{"first":1,"prev":4,"next":null,"last":5,"pages":5,"items":42,"data":"#),
        (0, 1, 10, #"{"first":1,"prev":null,"next":null,"last":1,"pages":1,"items":0,"data":"#),
        (5, 2, 0, #"{"first":1,"prev":1,"next":3,"last":5,"pages":5,"items":5,"data":"#),
    ]

    @Test(arguments: envelopeTable)
    func envelope(_ row: (total: Int, page: Int, perPage: Int, head: String)) {
        let data = Array(#"[{"id":1,"n":1.50}]"#.utf8)
        let bytes = ListResponse.envelope(total: row.total, page: row.page, perPage: row.perPage, data: data)
        #expect(String(decoding: bytes, as: UTF8.self) == row.head + #"[{"id":1,"n":1.50}]}"#)
    }

    @Test func bodyIsTheArrayUnlessEnveloped() {
        let data = Array("[]".utf8)
        #expect(ListResponse.body(total: 0, pagination: .page(number: 1, size: 10), data: data) == data)
        #expect(
            String(decoding: ListResponse.body(total: 0, pagination: .envelope(page: 1, perPage: 10), data: data), as: UTF8.self)
                .hasSuffix(#""data":[]}"#))
    }
}
