import BudgetCore
import HTTPServer
import Postgres

/// Reads the members of a JSON object body, collecting every invalid field instead of stopping at the first.
///
/// A 422 lists every invalid field at once in `errors` (docs/api.md, Errors); each accessor returns nil for an absent or
/// invalid member and records why in `errors`.
struct FieldReader {
    private let members: JSONObject
    /// Prefix for field names, e.g. `[2].` for the third record of an array body.
    private let prefix: String
    private(set) var errors: [Problem.FieldError] = []

    init(_ members: JSONObject, prefix: String = "") {
        self.members = members
        self.prefix = prefix
    }

    func has(_ name: String) -> Bool { members[name] != nil }

    func isNull(_ name: String) -> Bool { members[name] == .null }

    /// The member's value as the body holds it, for a member whose shape is its own (an array of parts).
    func value(_ name: String) -> JSONValue? { members[name] }

    /// A reader of an object inside this one, e.g. a part of `splits`, whose fields are named with this
    /// reader's prefix and then `prefix` (`splits[1].categoryId`); `take` keeps what it found wrong.
    func nested(_ members: JSONObject, prefix: String) -> FieldReader {
        FieldReader(members, prefix: self.prefix + prefix)
    }

    mutating func take(_ nested: FieldReader) {
        errors += nested.errors
    }

    mutating func fail(_ name: String, _ message: String) {
        errors.append(.init(field: prefix + name, message: message))
    }

    /// Rejects members the resource does not have; `ignored` ones (computed, read-only) pass silently.
    mutating func rejectUnknown(known: Set<String>, ignored: Set<String>) {
        for name in members.names where !known.contains(name) && !ignored.contains(name) {
            fail(name, "unknown field; known fields are \(known.sorted().joined(separator: ", "))")
        }
    }

    mutating func require(_ name: String) {
        if members[name] == nil { fail(name, "is required") }
    }

    /// A string of `range` characters (Unicode scalars, as PostgreSQL's `char_length` counts them).
    mutating func string(_ name: String, length range: ClosedRange<Int>) -> String? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value else {
            fail(name, "must be a string, not \(value.typeName)")
            return nil
        }
        guard range.contains(text.unicodeScalars.count) else {
            fail(
                name,
                range.lowerBound > 0
                    ? "must be \(range.lowerBound) to \(range.upperBound) characters long"
                    : "must be at most \(range.upperBound) characters long")
            return nil
        }
        return text
    }

    /// An amount given as a JSON number or a decimal string; exact, in cents.
    mutating func money(_ name: String, minimum: Money? = nil) -> Money? {
        guard let value = members[name] else { return nil }
        let text: String
        switch value {
        case .number(let literal), .string(let literal): text = literal
        default:
            fail(name, "must be a number or a decimal string, not \(value.typeName)")
            return nil
        }
        let money: Money
        do {
            money = try Money(parsing: text)
        } catch {
            switch error {
            case .notANumber: fail(name, "must be a decimal amount such as 12.50")
            case .tooManyDecimals: fail(name, "must be a whole number of cents (at most two decimals)")
            case .outOfRange: fail(name, "must be less than 1000000000000 in magnitude")
            }
            return nil
        }
        if let minimum, money < minimum {
            fail(name, "must be at least \(minimum)")
            return nil
        }
        return money
    }

    /// A JSON boolean.
    mutating func bool(_ name: String) -> Bool? {
        guard let value = members[name] else { return nil }
        guard case .bool(let flag) = value else {
            fail(name, "must be true or false, not \(value.typeName)")
            return nil
        }
        return flag
    }

    /// A positive 64-bit integer id given as a JSON number (or its decimal string form).
    mutating func id(_ name: String) -> Int64? {
        guard let value = members[name] else { return nil }
        switch value {
        case .number(let literal), .string(let literal):
            if let id = Int64(literal), id > 0 { return id }
        default: break
        }
        fail(name, "must be a positive integer")
        return nil
    }

    /// A calendar day written `YYYY-MM-DD`.
    mutating func day(_ name: String) -> String? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value, CalendarDay(text) != nil else {
            fail(name, "must be a date written YYYY-MM-DD")
            return nil
        }
        return text
    }

    /// A month written `YYYY-MM`.
    mutating func month(_ name: String) -> Month? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value, let month = Month(text) else {
            fail(name, "must be a month written YYYY-MM (01 to 12)")
            return nil
        }
        return month
    }

    /// A string that must be one of `values` (a closed list such as an account's `type`).
    mutating func oneOf(_ name: String, _ values: [String]) -> String? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value, values.contains(text) else {
            fail(name, "must be one of \(values.joined(separator: ", "))")
            return nil
        }
        return text
    }

    /// A member that JSON `null` clears: absent (`.none`), cleared (`.some(nil)`) or set, as `read` reads it.
    mutating func nullable<Value>(_ name: String, _ read: (inout FieldReader) -> Value?) -> Value?? {
        if isNull(name) { return .some(nil) }
        return read(&self).map { .some($0) }
    }

    /// An array of `count` objects, each read by `read` with a reader of its own whose errors name the element
    /// (`splits[1].amount`, as an array body names `[1].amount`); nil unless every element is valid.
    mutating func objects<Element>(_ name: String, count range: ClosedRange<Int>, _ read: (inout FieldReader) -> Element?) -> [Element]? {
        guard let value = members[name] else { return nil }
        guard case .array(let elements) = value else {
            fail(name, "must be an array of objects, not \(value.typeName)")
            return nil
        }
        guard range.contains(elements.count) else {
            fail(name, "must hold \(range.lowerBound) to \(range.upperBound) elements, not \(elements.count)")
            return nil
        }
        var elementsRead: [Element] = []
        let before = errors.count
        for (index, element) in elements.enumerated() {
            let elementName = "\(name)[\(index)]"
            guard case .object(let elementMembers) = element else {
                fail(elementName, "must be an object, not \(element.typeName)")
                continue
            }
            var reader = FieldReader(elementMembers, prefix: prefix + elementName + ".")
            let parsed = read(&reader)
            errors += reader.errors
            if let parsed, reader.errors.isEmpty { elementsRead.append(parsed) }
        }
        return errors.count == before ? elementsRead : nil
    }

    /// A time written as RFC 3339, e.g. `2026-11-21T08:00:00Z`.
    mutating func timestamp(_ name: String) -> Timestamp? {
        guard let value = members[name] else { return nil }
        guard case .string(let text) = value, let time = Timestamp(text) else {
            fail(name, "must be a time such as 2026-11-21T08:00:00Z")
            return nil
        }
        return time
    }
}
