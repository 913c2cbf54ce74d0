/// An exact amount of money in cents, as stored in a `numeric(14,2)` column.
///
/// Parsed from the decimal text of a JSON number or string, never through a binary float (docs/api.md, Money).
public struct Money: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// numeric(14,2) holds at most 12 digits before the decimal point.
    public static let maximumCents: Int64 = 999_999_999_999_99

    public let cents: Int64

    public init(cents: Int64) { self.cents = cents }

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.cents < rhs.cents }

    /// The same amount the other way: money out as money in. Exact, as `maximumCents` bounds both signs.
    public static prefix func - (money: Money) -> Money { Money(cents: -money.cents) }

    /// The amount with exactly two decimals, e.g. `-12.50`: the form PostgreSQL and our JSON use.
    public var description: String {
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return "\(cents < 0 ? "-" : "")\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    public enum ParseError: Error, Equatable {
        case notANumber
        case tooManyDecimals
        case outOfRange
    }

    /// Reads decimal text such as `12.5`, `-0.01` or `1e2`; the value must be a whole number of cents.
    ///
    /// Trailing zeros do not count as extra decimals (`12.500` is `12.50`), since they do not change the value.
    public init(parsing text: String) throws(ParseError) {
        var scanner = DecimalText(Array(text.utf8))
        guard let parsed = scanner.parse() else { throw .notANumber }
        guard let firstSignificant = parsed.digits.firstIndex(where: { $0 != UInt8(ascii: "0") }) else {
            self.cents = 0
            return
        }
        // value = digits × 10^exponent, and we need value × 100 as an integer.
        var digits = parsed.digits[firstSignificant...]
        var scale = parsed.exponent + 2
        while scale < 0 {
            guard digits.last == UInt8(ascii: "0") else { throw .tooManyDecimals }
            digits.removeLast()
            scale += 1
        }
        guard digits.count + scale <= 14 else { throw .outOfRange }
        var cents: Int64 = 0
        for digit in digits { cents = cents * 10 + Int64(digit - UInt8(ascii: "0")) }
        for _ in 0..<scale { cents *= 10 }
        guard cents <= Self.maximumCents else { throw .outOfRange }
        self.cents = parsed.isNegative ? -cents : cents
    }
}

/// The pieces of a decimal literal: sign, all digits without the point, and the power of ten they carry.
private struct DecimalText {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func parse() -> (isNegative: Bool, digits: [UInt8], exponent: Int)? {
        var isNegative = false
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") {
            isNegative = bytes[position] == UInt8(ascii: "-")
            position += 1
        }
        var digits = takeDigits()
        var exponent = 0
        guard !digits.isEmpty else { return nil }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            let fraction = takeDigits()
            guard !fraction.isEmpty else { return nil }
            digits += fraction
            exponent -= fraction.count
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            var exponentIsNegative = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") {
                exponentIsNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            let exponentDigits = takeDigits()
            // More than 4 exponent digits can only mean an amount that is absurdly large or small.
            guard !exponentDigits.isEmpty, exponentDigits.count <= 4 else { return nil }
            let value = exponentDigits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            exponent += exponentIsNegative ? -value : value
        }
        guard position == bytes.count, digits.count <= 1000 else { return nil }
        return (isNegative, digits, exponent)
    }

    private mutating func takeDigits() -> [UInt8] {
        let start = position
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            position += 1
        }
        return Array(bytes[start..<position])
    }
}
