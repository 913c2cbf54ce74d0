/// A value that can be sent as a text-format query parameter.
public protocol PostgresEncodable: Sendable {
    /// The value in PostgreSQL's text input syntax for its type.
    var postgresText: String { get }
}

/// A value that can be read from a result column, text or binary (`Query.inBinary`).
public protocol PostgresDecodable {
    /// Parses PostgreSQL's text output for the type; throws when the text is not a valid value.
    init(postgresText: String) throws

    /// Reads a binary value of the column's `type`. By default, from the text the server would have sent
    /// (`PostgresBinary.appendText`); the types read often read the binary form itself.
    init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws
}

extension PostgresDecodable {
    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        try self.init(postgresText: PostgresBinary.text(value, type: type))
    }
}

/// Lets `Row.decode(T?.self, …)` turn SQL NULL into `nil` instead of an error.
protocol NullablePostgresDecodable {
    static var null: Self { get }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(postgresText: String) throws {
        self = .some(try Wrapped(postgresText: postgresText))
    }

    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        self = .some(try Wrapped(postgresBinary: value, type: type))
    }
}

extension Optional: NullablePostgresDecodable where Wrapped: PostgresDecodable {
    static var null: Self { .none }
}

extension String: PostgresEncodable, PostgresDecodable {
    public var postgresText: String { self }
    public init(postgresText: String) { self = postgresText }

    /// Any type's text; a text type's binary form is its text (`jsonb`'s after a version byte).
    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        self = PostgresBinary.isText(type) ? String(decoding: value, as: UTF8.self) : try PostgresBinary.text(value, type: type)
    }
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

    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        guard type == .bool, value.count == 1 else {
            try self.init(postgresText: PostgresBinary.text(value, type: type))
            return
        }
        self = value[0] != 0
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

    /// An `int2`, `int4` or `int8`, refused when out of this type's range; other types through their text.
    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        guard type == .int2 || type == .int4 || type == .int8 else {
            try self.init(postgresText: PostgresBinary.text(value, type: type))
            return
        }
        guard let wide = PostgresBinary.integer(value), let narrow = Self(exactly: wide) else {
            throw PostgresError.decoding("not an integer in range", text: try PostgresBinary.text(value, type: type), type: "\(Self.self)")
        }
        self = narrow
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
