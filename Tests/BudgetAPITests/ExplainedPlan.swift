import BudgetCore
@testable import BudgetAPI

/// The `EXPLAIN (FORMAT JSON)` plans of a list's two statements, flattened into nodes labelled by the part
/// they serve.
///
/// `ListPlan.selectHeader` counts the matches (with the feed position and data version); the cursor of
/// `ListPlan.selectCursorRows` reads the page, and `_embed`/`_expand` add a SubPlan per page record to it.
struct ExplainedPlan: CustomStringConvertible {
    enum Part: Sendable {
        /// The header: `count(*)` for X-Total-Count.
        case count
        /// The page of records (the cursor's query).
        case page
        /// A per-record subquery of `_embed` or `_expand`, nested in the page.
        case relation
    }

    struct Node {
        var type: String
        /// The index a scan reads, if any.
        var index: String?
        var part: Part
    }

    private(set) var nodes: [Node] = []

    init(header: [UInt8], rows: [UInt8]) throws {
        collect(try Self.root(header), subplanDepth: 0, parts: (.count, .count))
        collect(try Self.root(rows), subplanDepth: 0, parts: (.page, .relation))
    }

    private static func root(_ json: [UInt8]) throws -> JSONObject {
        guard case .array(let plans) = try JSONParser.parse(json), case .object(let top)? = plans.first,
            case .object(let root)? = top["Plan"]
        else {
            throw PlanShapeError(text: String(decoding: json, as: UTF8.self))
        }
        return root
    }

    /// Whether a node of `type` (reading `index`, when given) appears in `part`.
    func uses(_ type: String, on index: String? = nil, in part: Part) -> Bool {
        nodes.contains { $0.type == type && $0.part == part && (index == nil || $0.index == index) }
    }

    /// Whether `part` reads the documents through the GIN index or the creation-order b-tree.
    func usesAnIndex(in part: Part) -> Bool {
        uses("Bitmap Index Scan", on: "documents_doc_idx", in: part) || uses("Index Scan", on: "documents_collection_position_idx", in: part)
    }

    /// Whether any part reads the documents table from end to end.
    var scansSequentially: Bool { nodes.contains { $0.type == "Seq Scan" } }

    var description: String {
        nodes.map { node in "\(node.part): \(node.type)" + (node.index.map { " using \($0)" } ?? "") }.joined(separator: "; ")
    }

    /// - Parameter parts: the part of the statement's own nodes, and of those in its subplans.
    private mutating func collect(_ plan: JSONObject, subplanDepth: Int, parts: (top: Part, nested: Part)) {
        let isSubplan: Bool =
            if case .string(let relationship)? = plan["Parent Relationship"] {
                relationship == "InitPlan" || relationship == "SubPlan"
            } else {
                false
            }
        let depth = subplanDepth + (isSubplan ? 1 : 0)
        // The feed position (X-Sync-Seq) reads the one row of change_feed_state, always by a Seq Scan, and the
        // data version counts the few changes not stamped yet (change_pending has no index); what these plans
        // are about is how the records are found.
        if case .string(let relation)? = plan["Relation Name"], relation == "change_feed_state" || relation == "change_pending" { return }
        if case .string(let type)? = plan["Node Type"] {
            var index: String?
            if case .string(let name)? = plan["Index Name"] { index = name }
            nodes.append(Node(type: type, index: index, part: depth == 0 ? parts.top : parts.nested))
        }
        if case .array(let children)? = plan["Plans"] {
            for case .object(let child) in children { collect(child, subplanDepth: depth, parts: parts) }
        }
    }
}

/// EXPLAIN answered something other than `[{"Plan":{…}}]`.
struct PlanShapeError: Error {
    var text: String
}
