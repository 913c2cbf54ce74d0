@testable import BudgetAPI

/// An `EXPLAIN (FORMAT JSON)` plan of a list statement, flattened into nodes labelled by the part they serve.
///
/// `ListPlan.selectPage` counts the matches in the outer query and builds the page in a scalar subquery,
/// which PostgreSQL runs as an InitPlan; `_embed`/`_expand` add a SubPlan per page record inside it.
struct ExplainedPlan: CustomStringConvertible {
    enum Part: Sendable {
        /// The outer query: `count(*)` for X-Total-Count.
        case count
        /// The page of records (the InitPlan).
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

    init(json: [UInt8]) throws {
        guard case .array(let plans) = try JSONParser.parse(json), case .object(let top)? = plans.first,
              case .object(let root)? = top["Plan"] else {
            throw PlanShapeError(text: String(decoding: json, as: UTF8.self))
        }
        collect(root, subplanDepth: 0)
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

    private mutating func collect(_ plan: JSONObject, subplanDepth: Int) {
        let isSubplan: Bool = if case .string(let relationship)? = plan["Parent Relationship"] {
            relationship == "InitPlan" || relationship == "SubPlan"
        } else {
            false
        }
        let depth = subplanDepth + (isSubplan ? 1 : 0)
        // The feed position (X-Sync-Seq) reads the one row of change_feed_state, always by a Seq Scan;
        // what these plans are about is how the records are found.
        if case .string("change_feed_state")? = plan["Relation Name"] { return }
        if case .string(let type)? = plan["Node Type"] {
            var index: String?
            if case .string(let name)? = plan["Index Name"] { index = name }
            nodes.append(Node(type: type, index: index, part: depth == 0 ? .count : depth == 1 ? .page : .relation))
        }
        if case .array(let children)? = plan["Plans"] {
            for case .object(let child) in children { collect(child, subplanDepth: depth) }
        }
    }
}

/// EXPLAIN answered something other than `[{"Plan":{…}}]`.
struct PlanShapeError: Error {
    var text: String
}
