/// Reads json-server 1.x's `_where=<JSON>` into a `Filter`.
///
/// The shape: `{"views":{"gt":100}}` compares a field; a member whose object holds no operator words is a
/// nested path (`{"author":{"name":{"eq":"typicode"}}}`); `{"or":[{…},{…}]}` matches when any branch does.
/// Several members, and several operators in one object, must all hold. Anything else is a 400 naming the spot,
/// where json-server would silently match nothing.
public enum WhereClause {
    public static func filter(json text: String) throws -> Filter {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(text.utf8))
        } catch {
            throw MalformedQuery("_where must be JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw MalformedQuery("_where must be a JSON object such as {\"views\":{\"gt\":100}}; it was \(value.typeName)")
        }
        return try filter(object, path: [])
    }

    private static func filter(_ object: JSONObject, path: [String]) throws -> Filter {
        var parts: [Filter] = []
        for (name, value) in object {
            if name == "or" {
                parts.append(try alternatives(value, path: path))
                continue
            }
            let memberPath = path + [name]
            guard case .object(let members) = value, !members.isEmpty else {
                throw MalformedQuery(
                    "_where: \(describe(memberPath)) must be an object of operators such as {\"eq\":1} or a nested field; it was \(value.typeName)")
            }
            let operatorCount = members.names.filter(FieldKey.operatorNames.contains).count
            if operatorCount == 0 {
                parts.append(try filter(members, path: memberPath))
            } else if operatorCount == members.count {
                parts += try members.map { try comparison(op: $0.name, value: $0.value, path: memberPath) }
            } else {
                let unknown = members.names.filter { !FieldKey.operatorNames.contains($0) }
                throw MalformedQuery(
                    "_where: unknown operator '\(unknown[0])' at \(describe(memberPath)); known operators: \(FieldKey.operatorNames.joined(separator: ", "))"
                )
            }
        }
        return parts.count == 1 ? parts[0] : .all(parts)
    }

    private static func alternatives(_ value: JSONValue, path: [String]) throws -> Filter {
        guard case .array(let branches) = value, !branches.isEmpty else {
            throw MalformedQuery("_where: \"or\" must be a non-empty array of objects")
        }
        return .any(
            try branches.map { branch in
                guard case .object(let object) = branch else {
                    throw MalformedQuery("_where: every branch of \"or\" must be an object; one was \(branch.typeName)")
                }
                return try filter(object, path: path)
            })
    }

    private static func comparison(op: String, value: JSONValue, path: [String]) throws -> Filter {
        if op == "in" {
            let values: [JSONValue]
            if case .array(let elements) = value { values = elements } else { values = [value] }
            return .any(try values.map { .comparison(Comparison(path: path, op: .eq, value: try scalar($0, op: op, path: path))) })
        }
        guard let comparisonOperator = ComparisonOperator(rawValue: op) else {
            preconditionFailure("operatorNames and ComparisonOperator disagree about '\(op)'")
        }
        let filterValue = try scalar(value, op: op, path: path)
        if filterValue == .null, comparisonOperator != .eq, comparisonOperator != .ne {
            throw MalformedQuery("_where: \(op) at \(describe(path)) needs a value, not null")
        }
        return .comparison(Comparison(path: path, op: comparisonOperator, value: filterValue))
    }

    /// A JSON scalar as filter text: numbers keep their exact literal, so `1.10` still compares as 1.1 in SQL.
    private static func scalar(_ value: JSONValue, op: String, path: [String]) throws -> FilterValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .text(flag ? "true" : "false")
        case .number(let literal): return .text(literal)
        case .string(let text): return .text(text)
        case .array, .object:
            throw MalformedQuery("_where: \(op) at \(describe(path)) takes a string, number, boolean or null; it was \(value.typeName)")
        }
    }

    private static func describe(_ path: [String]) -> String {
        path.isEmpty ? "the top level" : "'" + path.joined(separator: ".") + "'"
    }
}
