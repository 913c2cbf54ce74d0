import BudgetCore

/// The id of a generic record: the JSON value the client chose (an integer or a string) and its text key.
///
/// `documents.id` holds the text, so `1` and `"1"` name the same record, as they do in a URL; the body keeps
/// the JSON type the client used, so a client decoding `Int` ids gets integers back (docs/json-server.md).
struct DocumentID: Sendable, Equatable {
    /// `.number` with an integer literal, or a non-empty `.string`.
    let value: JSONValue
    /// The id as `documents.id` stores it and URLs write it.
    let key: String

    /// Reads an id member; nil when the value cannot be an id (null, boolean, fraction, empty string…).
    init?(_ value: JSONValue) {
        switch value {
        case .number(let literal) where Self.isIntegerLiteral(literal):
            self.value = value
            key = literal
        case .string(let text) where !text.isEmpty:
            self.value = value
            key = text
        default:
            return nil
        }
    }

    /// The id named by a path segment: an integer when it reads as one, a string otherwise.
    ///
    /// Used only when nothing stored says which type the client meant (e.g. `PUT /posts/7` creating `7`).
    init(pathSegment: String) {
        value = Self.isIntegerLiteral(pathSegment) ? .number(pathSegment) : .string(pathSegment)
        key = pathSegment
    }

    /// A positive integer key that fits `collections.next_id`, which must then move past it.
    var positiveInteger: Int64? {
        guard let number = Int64(key), number > 0, number < Int64.max, Self.isIntegerLiteral(key) else { return nil }
        return number
    }

    /// The id's key written back into a URL path segment, percent-encoding all but RFC 3986 unreserved bytes.
    var pathSegment: String {
        PathSegment.encoding(key)
    }

    /// `0` or an optional minus and digits without a leading zero, as RFC 8259 writes integers.
    private static func isIntegerLiteral(_ text: String) -> Bool {
        let digits = text.hasPrefix("-") ? text.utf8.dropFirst() : text.utf8[...]
        guard let first = digits.first, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return false
        }
        return first != UInt8(ascii: "0") || digits.count == 1
    }
}

extension JSONObject {
    /// The record's id, or nil when it has none; an `id` that cannot be one is a 400.
    func documentID() throws -> DocumentID? {
        guard let value = self["id"], value != .null else { return nil }
        guard let id = DocumentID(value) else {
            throw APIError.malformedBody("id must be an integer or a non-empty string, not \(value.typeName) \(JSONWriter.string(value))")
        }
        return id
    }

    /// The object with `id` set to `id`: in place when the member exists (e.g. `"id":null`), first otherwise.
    func settingID(_ id: DocumentID) -> JSONObject {
        guard self["id"] == nil else {
            var copy = self
            copy["id"] = id.value
            return copy
        }
        var result: JSONObject = ["id": id.value]
        for member in self { result[member.name] = member.value }
        return result
    }
}
