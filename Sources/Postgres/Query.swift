import Glibc

/// SQL text with bound parameters, built by string interpolation.
///
/// `let q: Query = "SELECT * FROM categories WHERE id = \(id)"` sends `SELECT * FROM categories WHERE id = $1`
/// and the value of `id` apart, so a value can never become SQL. Raw text enters only through the
/// deliberately loud `Query(unsafeSQL:)` or `\(unsafeSQL: …)`, which must never carry user input.
///
/// Placeholders always appear in the text in the order of their bindings (`$1` before `$2`), so the
/// query keeps its text with each placeholder's place marked, not numbered; composing two queries appends
/// one text to the other, and the right-hand side's placeholders are renumbered for free when `sql` is
/// rendered.
public struct Query: Sendable, Hashable {
    /// The SQL text with a NUL byte where each parameter goes, in the order of `bindings`: no statement's text
    /// holds a NUL (PostgreSQL refuses one). One string, so that a literal piece of SQL costs no more than
    /// its `String`, where a list of pieces cost an array for each (bench/README.md, "bench/push").
    private var text: String
    /// Text-format parameter values, `nil` meaning SQL NULL.
    public private(set) var bindings: [String?]
    /// Whether the server sends the rows in binary (libpq's `resultFormat` 1, for every column) rather than
    /// text: `inBinary()`. `QueryResult` reads both the same way.
    public private(set) var wantsBinaryResults = false

    /// Marks a parameter's place in `text`.
    private static let placeholder: UInt8 = 0

    /// Creates a query from raw SQL text; never pass text that came from a user.
    public init(unsafeSQL sql: String) {
        assert(!Self.holdsNUL(sql), "SQL text cannot hold NUL")
        text = sql
        bindings = []
    }

    /// The SQL text with `$1`, `$2`, … placeholders, as sent to the server.
    public var sql: String {
        guard !bindings.isEmpty else { return text }
        var source = text
        return source.withUTF8 { bytes in
            var rendered: [UInt8] = []
            rendered.reserveCapacity(bytes.count + 4 * bindings.count)
            var number = 0
            var runStart = 0
            for (index, byte) in bytes.enumerated() where byte == Self.placeholder {
                rendered.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                number += 1
                rendered.append(UInt8(ascii: "$"))
                Self.appendDecimal(number, to: &rendered)
                runStart = index + 1
            }
            rendered.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
            return String(decoding: rendered, as: UTF8.self)
        }
    }

    /// Appends the decimal digits of `number` (positive), without making a `String` of them.
    private static func appendDecimal(_ number: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        while divisor <= number / 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(number / divisor % 10))
            divisor /= 10
        }
    }

    /// The same statement with its rows sent in binary, which spares the server its output functions (costly
    /// for `numeric` and `timestamptz`) and costs this process the conversion (`PostgresBinary`). Every
    /// column's type must be one `PostgresBinary` reads.
    public func inBinary() -> Query {
        var query = self
        query.wantsBinaryResults = true
        return query
    }

    /// libpq's `resultFormat` for the statement.
    var resultFormat: Int32 { wantsBinaryResults ? 1 : 0 }

    /// Appends `other`, renumbering its placeholders after this query's.
    public mutating func append(_ other: Query) {
        text += other.text
        bindings.append(contentsOf: other.bindings)
    }

    /// Returns `lhs` followed by `rhs`, with `rhs`'s placeholders renumbered.
    public static func + (lhs: Query, rhs: Query) -> Query {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// Joins queries with a separator such as `" AND "` or `", "`; an empty list gives an empty query.
    public static func joined(_ parts: [Query], separator: Query) -> Query {
        var result = Query(unsafeSQL: "")
        for (index, part) in parts.enumerated() {
            if index > 0 { result.append(separator) }
            result.append(part)
        }
        return result
    }

    /// A quoted identifier, e.g. the column alias `"createdAt"`: every `"` in `name` is doubled, so any text
    /// stays one identifier. PostgreSQL keeps the first 63 bytes of a longer one.
    public init(identifier name: String) {
        precondition(!name.utf8.contains(0), "an identifier cannot hold NUL")
        // By scalar, as PostgreSQL reads the text: a `"` followed by a combining mark is one Character.
        var quoted = "\""
        for scalar in name.unicodeScalars {
            if scalar == "\"" { quoted.unicodeScalars.append(scalar) }
            quoted.unicodeScalars.append(scalar)
        }
        self.init(unsafeSQL: quoted + "\"")
    }

    fileprivate mutating func appendRaw(_ sql: String) {
        assert(!Self.holdsNUL(sql), "SQL text cannot hold NUL")
        text += sql
    }

    fileprivate mutating func appendBinding(_ value: String?) {
        bindings.append(value)
        text.unicodeScalars.append(Unicode.Scalar(Self.placeholder))
    }
}

extension Query: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.query
    }

    /// Builds a `Query`: literal text is SQL, interpolated values become bound parameters.
    public struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var query = Query(unsafeSQL: "")

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            query.appendRaw(literal)
        }

        /// Binds `value` as the next parameter.
        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            query.appendBinding(value.postgresText)
        }

        /// Binds `value` as the next parameter, or SQL NULL when it is `nil`.
        public mutating func appendInterpolation(_ value: (some PostgresEncodable)?) {
            query.appendBinding(value?.postgresText)
        }

        /// Splices a sub-query in place, renumbering its parameters.
        public mutating func appendInterpolation(_ subquery: Query) {
            query.append(subquery)
        }

        /// Inserts raw SQL text; only for text the program itself wrote (identifiers from an allow-list).
        public mutating func appendInterpolation(unsafeSQL text: String) {
            query.appendRaw(text)
        }

        /// Inserts a checked identifier as it is (`SQLIdentifier`: lowercase letters, digits and `_` only).
        public mutating func appendInterpolation(_ identifier: SQLIdentifier) {
            query.appendRaw(identifier.name)
        }

        /// Inserts an integer's digits where PostgreSQL takes no parameter (`FETCH 64`, `LIMIT` in a cursor's
        /// text): an integer's decimal form cannot carry anything else.
        public mutating func appendInterpolation(literal value: Int) {
            query.appendRaw(String(value))
        }
    }
}

/// A table, column, alias or cursor name the program declares, such as `transactions` or `t`: checked to be
/// an unquoted lowercase identifier (a letter or `_`, then letters, digits or `_`, at most 63 bytes), so that
/// it may stand in SQL text as it is. The one way besides `Query.init(identifier:)` (which quotes any text)
/// for a name to enter a statement without `unsafeSQL`.
public struct SQLIdentifier: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let name: String

    /// Traps on a name that is not a plain lowercase identifier: names come from the program, never from input.
    public init(_ name: String) {
        precondition(Self.isPlain(name), "\(name) is not a plain lowercase SQL identifier")
        self.name = name
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { name }

    /// Whether `name` may stand unquoted: `[a-z_][a-z0-9_]*`, at most 63 bytes (PostgreSQL's limit).
    public static func isPlain(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 63 else { return false }
        let letter = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || byte == UInt8(ascii: "_") }
        return letter(first) && bytes.dropFirst().allSatisfy { letter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}

extension Query {
    /// Throws for a parameter value holding a NUL byte, as PostgreSQL refuses one in text (22021).
    ///
    /// libpq sends text parameters as C strings, so a NUL would silently cut the value short there: a filter
    /// for `"a\0b"` would look for `"a"`. Both drivers check before sending.
    func checkSendable() throws {
        for case let value? in bindings where Self.holdsNUL(value) {
            throw PostgresError(
                kind: .server, sqlState: .characterNotInRepertoire,
                message: "a parameter holds a NUL byte, which PostgreSQL text cannot hold", sql: sql)
        }
    }
}

extension Query {
    /// Whether `text` holds a NUL byte, found by `memchr` over its contiguous UTF-8: a batch's parameters run to
    /// tens of kilobytes (the answers it stores), which a byte-by-byte walk of `String.UTF8View` took ten
    /// instructions a byte to read.
    static func holdsNUL(_ text: String) -> Bool {
        let found = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 0, bytes.count) != nil
        }
        return found ?? text.utf8.contains(0)
    }
}

extension Query: CustomStringConvertible, CustomDebugStringConvertible {
    /// The SQL text only: bound values may be personal data and stay out of logs.
    public var description: String { sql }

    public var debugDescription: String {
        "Query(sql: \(String(reflecting: sql)), bindings: \(String(reflecting: bindings)))"
    }
}
