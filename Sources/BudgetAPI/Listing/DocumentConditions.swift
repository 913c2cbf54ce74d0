import BudgetCore
import Postgres

/// SQL for comparisons on a member of a jsonb document; paths and values are always bound parameters.
enum DocumentConditions {
    /// - Parameter presence: for json-server 0.17's plain `field=value`, SQL saying whether any record of the
    ///   collection has the field; when none has it, the condition holds for every record (the parameter is ignored).
    static func condition(column: Query, path: [String], op: ComparisonOperator, value: FilterValue, presence: Query? = nil) -> Query {
        let element: Query = "(\(column) #> \(path)::text[])"
        let text: Query = "(\(column) #>> \(path)::text[])"
        guard case .text(let raw) = value else {
            // `_where` null: eq means a JSON null member; ne means a member that is there and not null.
            switch op {
            case .eq: return "jsonb_typeof(\(element)) = 'null'"
            default: return "jsonb_typeof(\(element)) <> 'null'"
            }
        }
        switch op {
        case .eq:
            return equality(column: column, path: path, element: element, candidates: candidates(raw), presence: presence)
        case .ne:
            // json-server 0.17 skips records whose member is missing or null, even for _ne.
            let inList = Query.joined(candidates(raw).map { "\(JSONWriter.string($0))::jsonb" }, separator: ", ")
            return "(jsonb_typeof(\(element)) <> 'null' AND \(element) NOT IN (\(inList)))"
        case .lt: return "query_compare(\(element), \(raw)) < 0"
        case .lte: return "query_compare(\(element), \(raw)) <= 0"
        case .gt: return "query_compare(\(element), \(raw)) > 0"
        case .gte: return "query_compare(\(element), \(raw)) >= 0"
        case .like:
            // json-server 0.17: new RegExp(value, 'i').test(String(member)); PostgreSQL's ~* is the case-insensitive match.
            return "\(text) ~* \(raw)"
        case .contains, .startsWith, .endsWith:
            let pattern = LikePattern.make(raw, op: op)
            return "(jsonb_typeof(\(element)) IN ('string', 'number') AND \(text) ILIKE \(pattern))"
        }
    }

    /// `q=` over a document: any string or number anywhere in it (values, not keys) contains the text.
    static func search(column: Query, path: [String], pattern: String) -> Query {
        let root: Query = path.isEmpty ? column : "(\(column) #> \(path)::text[])"
        // `strict $.**` visits every value once, including those inside arrays (lax mode would repeat them).
        return """
            EXISTS (SELECT 1 FROM jsonb_path_query(\(root), 'strict $.**') AS found(value) \
            WHERE jsonb_typeof(found.value) IN ('string', 'number') AND found.value #>> '{}' ILIKE \(pattern))
            """
    }

    /// The JSON values query text can mean: always the string, and the number, boolean or null it spells.
    ///
    /// docs/json-server.md: a number-looking value matches the number (numerically: `1` finds `1.0`) and a string holding
    /// the same text; json-server 0.17 compared `String(member) === value`, so `true` also finds the boolean.
    static func candidates(_ raw: String) -> [JSONValue] {
        var values: [JSONValue] = [.string(raw)]
        if case .number(let literal)? = try? JSONParser.parse(Array(raw.utf8)) {
            values.append(.number(literal))
        }
        switch raw {
        case "true": values.append(.bool(true))
        case "false": values.append(.bool(false))
        case "null": values.append(.null)
        default: break
        }
        return values
    }

    /// Equality as containment (`doc @> '{"postId":1}'`), which the GIN jsonb_path_ops index answers.
    ///
    /// With a `presence` test the containment becomes `doc @> ANY (CASE WHEN presence THEN ARRAY[…] ELSE
    /// ARRAY['{}'] END)`: still one index condition (a bitmap scan per array element), with the test run once as an
    /// InitPlan. `doc @> '{}'` holds for every record, so an unknown field filters nothing; an `OR NOT presence`
    /// would have cost the index.
    private static func equality(column: Query, path: [String], element: Query, candidates: [JSONValue], presence: Query?) -> Query {
        // Containment cannot say "element 0 of an array"; a path with an index segment compares the member itself.
        guard !path.contains(where: { $0.allSatisfy(\.isASCIIDigitCharacter) }) else {
            let inList = Query.joined(candidates.map { "\(JSONWriter.string($0))::jsonb" }, separator: ", ")
            guard let presence else { return "\(element) IN (\(inList))" }
            return "(NOT \(presence) OR \(element) IN (\(inList)))"
        }
        let documents = candidates.map { candidate -> Query in
            let nested = path.reversed().reduce(candidate) { inner, name in JSONValue.object([name: inner]) }
            return "\(JSONWriter.string(nested))::jsonb"
        }
        guard let presence else {
            return "(" + Query.joined(documents.map { "\(column) @> \($0)" }, separator: " OR ") + ")"
        }
        let array: Query = "ARRAY[" + Query.joined(documents, separator: ", ") + "]"
        return "\(column) @> ANY (CASE WHEN \(presence) THEN \(array) ELSE ARRAY['{}'::jsonb] END)"
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
