/// A parsed JSON document that keeps every number as the exact text the client sent.
///
/// Foundation's parsers turn numbers into `Double`; no binary float may touch the money path (docs/api.md,
/// Money), and generic documents come back with every digit (docs/json-server.md), so bodies are read
/// with `JSONParser` into this type and written back with `JSONWriter`.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text, e.g. `12.50` or `1e2`, validated against RFC 8259's grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

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

/// A JSON object's members in the order they were written, as JavaScript keeps them.
///
/// json-server answers a record with its keys in the order the client sent them, and a PATCH keeps the old
/// keys in place and appends new ones (`{...old, ...patch}`); this type keeps that order.
public struct JSONObject: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var members: [(name: String, value: JSONValue)] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (name, value) in elements { self[name] = value }
    }

    public var names: [String] { members.map(\.name) }
    public var isEmpty: Bool { members.isEmpty }
    public var count: Int { members.count }

    /// The member's value; setting an existing name replaces it in place, a new name is appended, nil removes.
    /// Names compare byte for byte, as JavaScript and PostgreSQL compare them: `"e\u0301"` and `"\u00e9"`
    /// are two members, though Swift's `==` would call the strings equal.
    public subscript(name: String) -> JSONValue? {
        get { members.first { $0.name.hasSameUTF8(as: name) }?.value }
        set {
            let index = members.firstIndex { $0.name.hasSameUTF8(as: name) }
            switch (index, newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil): members.remove(at: index)
            case (nil, let value?): members.append((name, value))
            case (nil, nil): break
            }
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: JSONValue)]> {
        members.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.name.hasSameUTF8(as: $1.name) && $0.value == $1.value }
    }
}

extension String {
    /// Whether the two strings hold the same bytes, which Swift's `==` does not ask (it compares canonical
    /// equivalence). Compared in their contiguous UTF-8 when both have it: a member lookup walked both
    /// strings' `UTF8View`s byte by byte, a few hundred instructions for a short name.
    func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let same = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in mine.elementsEqual(theirs) }
        }
        return (same ?? nil) ?? utf8.elementsEqual(other.utf8)
    }
}
