/// A filter parameter's name split into a field path and an operator, in either json-server dialect.
///
/// `views_gte` and `views:gte` both mean "views ≥ value"; `author.name` and `tags[0]` are deep keys. A name that
/// only looks like it has an operator suffix (`created_at`, `first_name`) is a plain field: only known operator
/// words count as a suffix, as in json-server.
public struct FieldKey: Sendable, Equatable {
    public var path: [String]
    /// The operator word as written (`gte`, `in`, `like`, …).
    public var operatorName: String
    /// No operator was written (`author=ada`): json-server 0.17's equality, the one form it ignores when no
    /// record has the field (its `_gte`, `_lte`, `_ne` and `_like` always filter).
    public var isPlain = false

    /// Operator words accepted after `_` or `:`, as docs/json-server.md lists them, plus 0.17's `like`.
    public static let operatorNames = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "like", "contains", "startsWith", "endsWith"]

    public init(_ name: String) throws {
        if let colon = name.lastIndex(of: ":") {
            // json-server 1.x: `field:op`, where an empty op means eq; an unknown op is our 400, not a silent skip.
            let op = String(name[name.index(after: colon)...])
            guard op.isEmpty || Self.operatorNames.contains(op) else {
                throw MalformedQuery(
                    "unknown operator '\(op)' in '\(name)'; known operators: \(Self.operatorNames.joined(separator: ", "))")
            }
            path = try Self.path(String(name[..<colon]), parameter: name)
            operatorName = op.isEmpty ? "eq" : op
        } else if let underscore = name.lastIndex(of: "_"), underscore != name.startIndex,
            case let op = String(name[name.index(after: underscore)...]), Self.operatorNames.contains(op)
        {
            // json-server 0.17 (`_gte`, `_lte`, `_ne`, `_like`) and 1.x's compatibility spelling of every operator.
            path = try Self.path(String(name[..<underscore]), parameter: name)
            operatorName = op
        } else {
            path = try Self.path(name, parameter: name)
            operatorName = "eq"
            isPlain = true
        }
    }

    /// The comparisons one `name=value` item asks for; `in` takes a comma-separated list and matches any of it.
    public func comparisons(value: String) throws -> [Comparison] {
        if operatorName == "in" {
            let values = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return values.map { Comparison(path: path, op: .eq, value: .text($0)) }
        }
        guard let op = ComparisonOperator(rawValue: operatorName) else {
            preconditionFailure("operatorNames and ComparisonOperator disagree about '\(operatorName)'")
        }
        return [Comparison(path: path, op: op, value: .text(value), isIgnoredForUnknownField: isPlain)]
    }

    /// Splits `a.b[0].c` into `["a", "b", "0", "c"]`; empty segments are a 400.
    public static func path(_ text: String, parameter: String) throws -> [String] {
        // json-server 1.x reads `tags[0]` as `tags.0` (dot-prop); brackets become dots before splitting.
        let dotted = text.replacing("[", with: ".").replacing("]", with: "")
        let segments = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty }) else {
            throw MalformedQuery("'\(parameter)' does not name a field: a path is names joined by dots, e.g. author.name")
        }
        return segments
    }
}
