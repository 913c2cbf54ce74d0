@testable import BudgetCore
import Foundation
import Testing

@testable import BudgetAPI
@testable import HTTPServer
@testable import Postgres

/// The fuzz build (fuzz/run) compiles only whole modules that need nothing beyond the standard library, so the
/// list-query target stops at parsing; planning needs PostgreSQL's `Query`. This suite plans every input the
/// target keeps (its seeds, corpus and reproducers, fuzz/README.md) against the typed catalogs and a document
/// catalog with the checks the target ran on them: `$n` placeholders match the bindings, an unsendable
/// statement answers 4xx, and a copy with every value and generic field name replaced plans to the same SQL
/// text (client text is only ever bound).
@Suite("List plans of the fuzz inputs")
struct ListPlanFuzzInputTests {
    static let documents = DocumentCatalog(column: "d.doc", collection: "records", ledger: .first)
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz")

    /// Every kept input of a fuzz target: its seeds, its corpus and its reproducers (fuzz/README.md).
    static func keptInputs(of target: String) throws -> [URL] {
        var files: [URL] = []
        for folder in ["seeds/\(target)", "corpus/\(target)", "reproducers"] {
            let url = fuzz.appendingPathComponent(folder)
            let names = try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
            files += names.filter { folder != "reproducers" || $0.hasPrefix("\(target)-") }.map { url.appendingPathComponent($0) }
        }
        return files
    }

    @Test func everyKeptInputPlansWithItsTextOnlyBound() throws {
        let files = try Self.keptInputs(of: "list-query")
        #expect(files.count > 100, "the target's inputs were not found under \(Self.fuzz.path)")
        var planned = 0
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let components = bytes.withUnsafeBytes({ RequestTarget("/records?" + Self.percentEncoded($0)) }),
                let query = try? ListQuery.parse(components.query)
            else { continue }
            for catalog in [
                CategoryRecord.shape.catalog, CategoryRecord.monthShape.catalog, TransactionRecord.shape.catalog,
                BudgetRecord.shape.catalog,
            ] {
                if Self.plan(query, catalog: catalog, canonical: { Self.canonical(query, typedBy: catalog) }) { planned += 1 }
            }
            if Self.plan(query, catalog: Self.documents, canonical: { Self.canonical(query) }) { planned += 1 }
        }
        #expect(planned > 100, "only \(planned) plans were checked")
    }

    /// Plans `query`, and checks the SQL against the plan of a copy whose text is all replaced.
    ///
    /// Client text must only ever be bound: the copy keeps the query's shape and replaces every value and
    /// generic field name with one of the same kind, so its SQL text must be identical, bindings aside.
    /// Whether `query` planned (and was checked).
    @discardableResult
    private static func plan(_ query: ListQuery, catalog: some FieldCatalog, canonical: () -> ListQuery) -> Bool {
        let plan: ListPlan
        do {
            plan = try ListPlan(query, catalog: catalog)
        } catch {
            #expect(error is APIError || error is MalformedQuery, "ListPlan threw \(error)")
            return false
        }
        #expect(plan.pagination == query.pagination, "the plan changed the pagination")
        #expect(plan.offset >= 0 && (plan.limit ?? 0) >= 0, "limit \(String(describing: plan.limit)), offset \(plan.offset)")
        #expect(plan.usesPatterns == (query.search != nil || usesLike(query.filter)), "usesPatterns is \(plan.usesPatterns)")
        let statements = select(plan)
        statements.forEach(checkPlaceholders)
        statements.forEach(checkSendable)
        let other: ListPlan
        do {
            other = try ListPlan(canonical(), catalog: catalog)
        } catch {
            Issue.record("the canonical copy of a plannable query does not plan: \(error)")
            return false
        }
        for (statement, otherStatement) in zip(statements, select(other)) {
            #expect(statement.sql == otherStatement.sql, "client text changed the SQL text:\n\(statement.sql)\n\(otherStatement.sql)")
            #expect(statement.bindings.count == otherStatement.bindings.count, "client text changed the number of bindings")
        }
        return true
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
                Issue.record("an unsendable statement would answer 500: \(error)")
                return
            }
            #expect((400..<500).contains(problem.status.code), "an unsendable statement answers \(problem.status.code)")
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
        #expect(numbers == Array(0..<query.bindings.count).map { $0 + 1 }, "placeholders \(numbers) for \(query.bindings.count) bindings")
        #expect(!sql.contains(UInt8(ascii: ";")), "a ';' in the SQL: \(query.sql)")
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
