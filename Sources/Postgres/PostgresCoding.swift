/// A value that can be sent as a text-format query parameter.
public protocol PostgresEncodable: Sendable {
    /// The value in PostgreSQL's text input syntax for its type.
    var postgresText: String { get }
}

/// A value that can be read from a text-format result column.
public protocol PostgresDecodable {
    /// Parses PostgreSQL's text output for the type; throws when the text is not a valid value.
    init(postgresText: String) throws
}

/// Lets `Row.decode(T?.self, …)` turn SQL NULL into `nil` instead of an error.
protocol NullablePostgresDecodable {
    static var null: Self { get }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(postgresText: String) throws {
        self = .some(try Wrapped(postgresText: postgresText))
    }
}

extension Optional: NullablePostgresDecodable where Wrapped: PostgresDecodable {
    static var null: Self { .none }
}

extension String: PostgresEncodable, PostgresDecodable {
    public var postgresText: String { self }
    public init(postgresText: String) { self = postgresText }
}

extension Substring: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public var postgresText: String { self ? "true" : "false" }

    public init(postgresText: String) throws {
        // PostgreSQL prints booleans as "t"/"f"; the longer spellings are accepted for robustness.
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw PostgresError.decoding("not a boolean", text: postgresText, type: "Bool")
        }
    }
}

/// Shared conformance for the fixed-width integers PostgreSQL's int2/int4/int8 map to.
public protocol PostgresInteger: FixedWidthInteger, PostgresEncodable, PostgresDecodable {}

extension PostgresInteger {
    public var postgresText: String { String(self) }

    public init(postgresText: String) throws {
        guard let value = Self(postgresText) else {
            throw PostgresError.decoding("not an integer in range", text: postgresText, type: "\(Self.self)")
        }
        self = value
    }
}

extension Int: PostgresInteger {}
extension Int64: PostgresInteger {}
extension Int32: PostgresInteger {}
extension Int16: PostgresInteger {}

/// Arrays are sent as PostgreSQL array literals, e.g. for `WHERE id = ANY(\(ids))`.
extension Array: PostgresEncodable where Element: PostgresEncodable {
    public var postgresText: String {
        var literal = PostgresArrayLiteral()
        for element in self { literal.append(element.postgresText) }
        return literal.postgresText
    }
}

/// A PostgreSQL array literal built one element at a time, so that many values (an import's column) travel as
/// one parameter without an array of them held first.
///
/// Every element is double-quoted with `"` and `\` escaped, so commas, braces and the word NULL inside a value
/// stay data (PostgreSQL array input syntax, §8.15.6). Escaping works on UTF-8 bytes: both are ASCII, and no
/// byte of a multi-byte character is ASCII, so a `"` followed by a combining mark, one Swift Character, is
/// still escaped as PostgreSQL, which reads bytes, needs.
public struct PostgresArrayLiteral: PostgresEncodable {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    public private(set) var count = 0

    public init() {}

    public mutating func append(_ element: some StringProtocol) {
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        count += 1
        bytes.append(UInt8(ascii: "\""))
        for byte in element.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func appendNull() {
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        count += 1
        bytes += Array("NULL".utf8)
    }

    public var postgresText: String {
        String(decoding: bytes + [UInt8(ascii: "}")], as: UTF8.self)
    }
}
