/// A parsed JSON document that keeps every number as the exact text the client sent.
///
/// Foundation's parsers turn numbers into `Double`; SPEC §2 forbids a binary float anywhere on the money
/// path, so request bodies are read with `JSONParser` into this type instead.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text, e.g. `12.50` or `1e2`, validated against RFC 8259's grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members by name; a repeated name keeps its last value, as JavaScript and PostgreSQL's jsonb do.
    case object([String: JSONValue])

    /// A short name for the value's type, for validation messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
