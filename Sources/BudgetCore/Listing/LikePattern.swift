/// ILIKE patterns built from client text, with the wildcards `%` and `_` (and the escape `\`) made literal.
public enum LikePattern {
    public static func escaped(_ text: String) -> String {
        // By scalar, as PostgreSQL reads the pattern: a `%` followed by a combining mark is one Swift
        // Character that equals no wildcard, yet PostgreSQL still sees the `%` (found by fuzz/list-query).
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar == "%" || scalar == "_" || scalar == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// The pattern for json-server 1.x's contains / startsWith / endsWith (all case-insensitive there too).
    public static func make(_ text: String, op: ComparisonOperator) -> String {
        let literal = escaped(text)
        switch op {
        case .startsWith: return literal + "%"
        case .endsWith: return "%" + literal
        default: return "%" + literal + "%"
        }
    }
}
