/// An exact decimal number as PostgreSQL's `numeric` holds it: a sign, decimal digits and a scale (how many of
/// the digits follow the point). Never a binary float: `-12.50` stays `-12.50`, its scale kept.
///
/// Read from a column's text (`-12.50`) or from its binary form (`PostgresBinary.appendNumeric`), which writes
/// the same text the server would have. `NaN` and the infinities are refused: they are not decimal numbers.
public struct PostgresDecimal: Sendable, Hashable, CustomStringConvertible, PostgresEncodable, PostgresDecodable {
    public let isNegative: Bool
    /// The integer digits then the `scale` fraction digits, as ASCII, without the point: `1250` for `-12.50`.
    /// The integer part has no leading zeros, but one `0` when it is zero (`0.05` holds `005`).
    public let digits: [UInt8]
    /// How many of `digits` follow the point.
    public let scale: Int

    /// Parses `numeric`'s text: an optional `-`, digits, and optionally a `.` followed by digits.
    public init?(_ text: some StringProtocol) {
        var bytes = Array(text.utf8)
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes.removeFirst() }
        let point = bytes.firstIndex(of: UInt8(ascii: "."))
        var integer = Array(bytes[..<(point ?? bytes.count)])
        let fraction = point.map { Array(bytes[($0 + 1)...]) } ?? []
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard !integer.isEmpty, integer.allSatisfy(isDigit), fraction.allSatisfy(isDigit), point == nil || !fraction.isEmpty else {
            return nil
        }
        while integer.count > 1, integer.first == UInt8(ascii: "0") { integer.removeFirst() }
        isNegative = negative
        digits = integer + fraction
        scale = fraction.count
    }

    public init(postgresText: String) throws {
        guard let value = PostgresDecimal(postgresText) else {
            throw PostgresError.decoding("not a finite decimal number", text: postgresText, type: "PostgresDecimal")
        }
        self = value
    }

    /// Reads `numeric`'s binary form; anything else falls back to the column's text.
    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        guard type == .numeric else {
            try self.init(postgresText: PostgresBinary.text(value, type: type))
            return
        }
        var text: [UInt8] = []
        guard PostgresBinary.appendNumeric(value, to: &text), let decimal = PostgresDecimal(String(decoding: text, as: UTF8.self)) else {
            throw PostgresError.decoding(
                "not a finite decimal number", text: String(decoding: text, as: UTF8.self), type: "PostgresDecimal")
        }
        self = decimal
    }

    /// The text `numeric` prints: `-12.50`, `0`, `0.05`.
    public var description: String {
        var text = isNegative ? "-" : ""
        let integerCount = digits.count - scale
        text += String(decoding: digits[..<integerCount], as: UTF8.self)
        if scale > 0 { text += "." + String(decoding: digits[integerCount...], as: UTF8.self) }
        return text
    }

    public var postgresText: String { description }
}
