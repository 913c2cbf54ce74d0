@testable import BudgetAPI
@testable import HTTPServer
@testable import Postgres
#if canImport(Glibc)
    import Glibc
#endif

// The list query language: the input is the query string of a request-target, split and decoded as the
// server does, parsed into a ListQuery and planned against both typed catalogs and a document catalog.

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    ListQueryTarget.check(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

enum ListQueryTarget {
    static let documents = DocumentCatalog(column: "d.doc", collection: "records", ledger: .first)

    static func check(_ input: UnsafeRawBufferPointer) {
        // The parser refuses a target with bytes outside visible ASCII; percent-encoding them lets every input
        // through to the query language, where they arrive as decoded (possibly non-ASCII) text.
        guard let components = RequestTarget("/records?" + percentEncoded(input)) else { return }
        let query: ListQuery
        do {
            query = try ListQuery.parse(components.query)
        } catch {
            expectMalformedQuery(error, "ListQuery.parse")
            return
        }
        checkQuery(query)
        if case .page = query.pagination { checkLinks(components.query) }
        for catalog in [
            CategoryRecord.shape.catalog, CategoryRecord.monthShape.catalog, TransactionRecord.shape.catalog,
            BudgetRecord.shape.catalog,
        ] {
            plan(query, catalog: catalog) { canonical(query, typedBy: catalog) }
        }
        plan(query, catalog: documents) { canonical(query) }
    }

    /// Plans `query`, and checks the SQL against the plan of a copy whose text is all replaced.
    ///
    /// Client text must only ever be bound: the copy keeps the query's shape and replaces every value and
    /// generic field name with one of the same kind, so its SQL text must be identical, bindings aside.
    private static func plan(_ query: ListQuery, catalog: some FieldCatalog, canonical: () -> ListQuery) {
        let plan: ListPlan
        do {
            plan = try ListPlan(query, catalog: catalog)
        } catch {
            expectMalformedQuery(error, "ListPlan")
            return
        }
        invariant(plan.pagination == query.pagination, "the plan changed the pagination")
        invariant(plan.offset >= 0 && (plan.limit ?? 0) >= 0, "limit \(String(describing: plan.limit)), offset \(plan.offset)")
        invariant(plan.usesPatterns == (query.search != nil || usesLike(query.filter)), "usesPatterns is \(plan.usesPatterns)")
        let statements = select(plan)
        statements.forEach(checkPlaceholders)
        statements.forEach(checkSendable)
        let other: ListPlan
        do {
            other = try ListPlan(canonical(), catalog: catalog)
        } catch {
            fatalError("the canonical copy of a plannable query does not plan: \(error)")
        }
        for (statement, otherStatement) in zip(statements, select(other)) {
            invariant(statement.sql == otherStatement.sql, "client text changed the SQL text:\n\(statement.sql)\n\(otherStatement.sql)")
            invariant(statement.bindings.count == otherStatement.bindings.count, "client text changed the number of bindings")
        }
    }

    /// The statements of a list: a generic list's header and its cursor's rows, and the single statement a
    /// typed list of few records is read with.
    private static func select(_ plan: ListPlan) -> [Query] {
        let scope: Query = "d.collection = \("records")"
        return [
            plan.selectHeader(from: "documents d", scope: scope, ledger: .first),
            plan.selectCursorRows(columns: "d.doc", from: "documents d", scope: scope, tieBreak: "d.position", offset: plan.offset),
            plan.selectRows(columns: "d.doc", from: "documents d", scope: scope, tieBreak: "d.position", ledger: .first, limit: 1001),
        ]
    }

    /// A statement the drivers refuse to send (a NUL in a value) must answer 4xx: a 500 is a finding.
    private static func checkSendable(_ statement: Query) {
        do {
            try statement.checkSendable()
        } catch {
            let answer = APIError.translating(error)
            guard let problem = (answer as? any ProblemConvertible)?.problem else {
                fatalError("an unsendable statement would answer 500: \(error)")
            }
            invariant((400..<500).contains(problem.status.code), "an unsendable statement answers \(problem.status.code)")
        }
    }

    /// `$1`, `$2`, … appear once each, in order, one per binding; no statement separator ever appears.
    private static func checkPlaceholders(_ query: Query) {
        let sql = Array(query.sql.utf8)
        var numbers: [Int] = []
        var index = 0
        while index < sql.count {
            defer { index += 1 }
            guard sql[index] == UInt8(ascii: "$") else { continue }
            var number = 0, digits = 0
            while index + 1 < sql.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(sql[index + 1]) {
                number = number * 10 + Int(sql[index + 1] - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            if digits > 0 { numbers.append(number) }
        }
        invariant(numbers == Array(0..<query.bindings.count).map { $0 + 1 }, "placeholders \(numbers) for \(query.bindings.count) bindings")
        invariant(!sql.contains(UInt8(ascii: ";")), "a ';' in the SQL: \(query.sql)")
    }

    private static func checkQuery(_ query: ListQuery) {
        let most = ListQuery.maximumCount
        switch query.pagination {
        case .none:
            break
        case .slice(let start, let end):
            invariant(
                (0...most).contains(start) && (end.map { $0 >= start && $0 <= 2 * most } ?? true), "slice \(start)..<\(String(describing: end))")
        case .page(let number, let size):
            invariant((1...most).contains(number) && (1...most).contains(size), "page \(number) of size \(size)")
        case .envelope(let page, let perPage):
            invariant((1...most).contains(page) && (1...most).contains(perPage), "envelope page \(page) of \(perPage)")
        }
        invariant(query.search.map { !$0.isEmpty } ?? true, "an empty search")
        invariant((query.embeds + query.expands).allSatisfy { !$0.isEmpty && !$0.contains(",") }, "embeds \(query.embeds), expands \(query.expands)")
        invariant(query.sort.allSatisfy { !$0.path.isEmpty && $0.path.allSatisfy { !$0.isEmpty } }, "sort keys \(query.sort)")
        if !skipsLikeEscaping {
            for text in (query.search.map { [$0] } ?? []) + texts(query.filter) { checkLikeEscaping(text) }
        }
    }

    /// `FUZZ_SKIP=like-escaping` leaves out the check below while its known failure is unfixed (see README).
    static let skipsLikeEscaping = getenv("FUZZ_SKIP").map { String(cString: $0).split(separator: ",").contains("like-escaping") } ?? false

    /// The LIKE pattern of a search text matches that text literally: every `%`, `_` and `\` is escaped.
    ///
    /// PostgreSQL reads the pattern by code points, so the check does too (not by Characters, where a
    /// combining mark after `%` makes a different Character).
    private static func checkLikeEscaping(_ text: String) {
        var literal: [Unicode.Scalar] = []
        var scalars = LikePattern.escaped(text).unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\\":
                guard let escaped = scalars.next() else { fatalError("LIKE pattern of \(text.debugDescription) ends in an escape") }
                literal.append(escaped)
            case "%", "_":
                fatalError("LIKE pattern of \(text.debugDescription) has an unescaped wildcard: \(LikePattern.escaped(text).debugDescription)")
            default:
                literal.append(scalar)
            }
        }
        invariant(literal == Array(text.unicodeScalars), "LIKE pattern of \(text.debugDescription) means other text")
    }

    private static func texts(_ filter: Filter) -> [String] {
        switch filter {
        case .all(let parts), .any(let parts): parts.flatMap(texts)
        case .comparison(let comparison): if case .text(let text) = comparison.value { [text] } else { [] }
        }
    }

    /// The query with every client value and generic field name replaced by a stand-in of the same kind.
    private static func canonical(_ query: ListQuery) -> ListQuery {
        var copy = query
        // An all-digit segment is an array index (no containment); any other name is bound like any other.
        let segment = { (name: String) in name.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ? "0" : "f" }
        copy.filter = map(query.filter) { comparison in
            var result = comparison
            result.path = comparison.path.map(segment)
            if case .text(let raw) = comparison.value {
                // The JSON values the text can mean decide how many candidates are bound (DocumentConditions).
                let isNumber = if case .number? = try? JSONParser.parse(Array(raw.utf8)) { true } else { false }
                result.value = .text(isNumber ? "0" : ["true", "false", "null"].contains(raw) ? raw : "x")
            }
            return result
        }
        copy.search = query.search.map { _ in "s" }
        copy.sort = query.sort.map { SortKey(path: $0.path.map(segment), isDescending: $0.isDescending) }
        return copy
    }

    /// The query with every value replaced by a valid one of its field's type; field names stay (they are SQL).
    private static func canonical(_ query: ListQuery, typedBy catalog: ColumnCatalog) -> ListQuery {
        var copy = query
        copy.filter = map(query.filter) { comparison in
            var result = comparison
            if case .text = comparison.value, case .column(_, let type)? = try? catalog.field(comparison.path) {
                let stand: String =
                    switch type {
                    case .integer, .money: "1"
                    case .text: "x"
                    case .date, .timestamp: "2026-01-01"
                    case .boolean: "true"
                    case .month: "2026-01"
                    // `ColumnCatalog.field` refuses a JSON member, so no comparison reaches here with one.
                    case .json: "x"
                    }
                result.value = .text(stand)
            }
            return result
        }
        copy.search = query.search.map { _ in "s" }
        return copy
    }

    private static func map(_ filter: Filter, _ transform: (Comparison) -> Comparison) -> Filter {
        switch filter {
        case .all(let parts): .all(parts.map { map($0, transform) })
        case .any(let parts): .any(parts.map { map($0, transform) })
        case .comparison(let comparison): .comparison(transform(comparison))
        }
    }

    private static func usesLike(_ filter: Filter) -> Bool {
        switch filter {
        case .all(let parts), .any(let parts): parts.contains(where: usesLike)
        case .comparison(let comparison): comparison.op == .like
        }
    }

    /// `Link` and envelope answers built from these query items: the URLs decode back to the same items.
    private static func checkLinks(_ items: [(name: String, value: String)]) {
        let origin = "http://example.test"
        let url = PageURL(host: "example.test", path: "/records", query: items)
        // Page 2 of 4 has all four links; the largest counts must not overflow. (Every link encodes every
        // item again, so more combinations would cost much of the run's speed for little.)
        let most = ListQuery.maximumCount
        for (page, size, total) in [(2, 3, 11), (most, most, most), (1, 1, 0)] {
            let body = ListResponse.body(total: total, pagination: .envelope(page: page, perPage: size), data: Array("[]".utf8))
            guard case .object(let envelope)? = try? JSONParser.parse(body) else { fatalError("the envelope is not a JSON object") }
            invariant(envelope.names == ["first", "prev", "next", "last", "pages", "items", "data"], "envelope members \(envelope.names)")

            let headers = ListResponse.headers(total: total, pagination: .page(number: page, size: size), limit: size, url: url)
            invariant(headers.first.map { $0.name == "X-Total-Count" && $0.value == "\(total)" } ?? false, "no X-Total-Count")
            let link = headers.first { $0.name == "Link" }?.value
            // Encoded URLs hold no space, so ", " only separates the links.
            let entries = (link ?? "").split(separator: ", ")
            invariant(entries.count == (page == 2 ? 4 : 0), "Link \(link ?? "missing") for page \(page) of \(size) in \(total)")
            for (entry, (rel, linkedPage)) in zip(entries, [("first", 1), ("prev", 1), ("next", 3), ("last", 4)]) {
                guard entry.hasPrefix("<"), let close = entry.firstIndex(of: ">"), entry[close...] == ">; rel=\"\(rel)\"" else {
                    fatalError("Link entry \(entry), expected rel \(rel)")
                }
                let target = String(entry[entry.index(after: entry.startIndex)..<close])
                checkURL(target, origin: origin, expected: items.map { $0.name == "_page" ? (name: $0.name, value: "\(linkedPage)") : $0 })
            }
        }
    }

    private static func checkURL(_ link: String, origin: String, expected: [(name: String, value: String)]) {
        invariant(link.hasPrefix(origin + "/records"), "link \(link)")
        let relative = String(link.dropFirst(origin.count))
        invariant(relative.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "link with a byte a request-target may not hold: \(link)")
        guard let back = RequestTarget(relative) else { fatalError("link does not decode: \(link)") }
        invariant(back.path == "/records", "link path \(back.path)")
        invariant(back.query.elementsEqual(expected) { $0 == $1 }, "link query \(back.query) for \(expected)")
    }

    private static func expectMalformedQuery(_ error: any Error, _ stage: String) {
        guard let apiError = error as? APIError, case .malformedQuery = apiError else {
            fatalError("\(stage) threw \(type(of: error)) \(error), not APIError.malformedQuery")
        }
        invariant(apiError.problem.status == .badRequest, "\(stage) answered \(apiError.problem.status)")
    }

    static func percentEncoded(_ bytes: UnsafeRawBufferPointer) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            if (0x21...0x7E).contains(byte) {
                text.append(byte)
            } else {
                text += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
