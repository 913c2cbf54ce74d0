/// An exact decimal number for PostgreSQL's `numeric`, kept as canonical decimal text and never as `Double`.
///
/// Money goes through this type, so `123456789012.34` and `-0.01` arrive exactly as stored. The text is
/// canonical: an optional `-`, no leading zeros, and the scale (digits after the point) as given, so
/// `400.00` keeps its two decimals. Equality compares values: `1.5 == 1.50`.
public struct Numeric: Sendable, Hashable, CustomStringConvertible, PostgresEncodable, PostgresDecodable {
    /// Canonical decimal text, e.g. `-0.01` or `400.00`.
    public let text: String

    /// Parses decimal text such as `12.30`, `-0.01`, `+7` or `1.5e2`; returns nil for anything else.
    public init?(_ text: some StringProtocol) {
        guard let canonical = Self.canonicalize(Substring(text)) else { return nil }
        self.text = canonical
    }

    /// The exact value of an integer.
    public init(_ value: Int) {
        text = String(value)
    }

    /// The value `units / 10^scale`, e.g. `Numeric(scaled: -1, scale: 2)` is `-0.01`.
    public init(scaled units: Int64, scale: Int) {
        precondition(scale >= 0, "scale must not be negative")
        let digits = String(units.magnitude)
        let padded = String(repeating: "0", count: max(0, scale + 1 - digits.count)) + digits
        let point = padded.index(padded.endIndex, offsetBy: -scale)
        let body = scale == 0 ? padded : padded[..<point] + "." + padded[point...]
        text = (units < 0 ? "-" : "") + body
    }

    public init(postgresText: String) throws {
        // numeric also has NaN and ±Infinity; no amount in this program can be one.
        guard let value = Numeric(postgresText) else {
            throw PostgresError.decoding("not a finite decimal", text: postgresText, type: "Numeric")
        }
        self = value
    }

    public var postgresText: String { text }
    public var description: String { text }

    /// Number of digits after the decimal point in `text`.
    public var scale: Int {
        guard let point = text.firstIndex(of: ".") else { return 0 }
        return text.distance(from: text.index(after: point), to: text.endIndex)
    }

    /// The value times `10^scale` as an integer (cents for scale 2); nil when that is inexact or overflows.
    public func scaled(to scale: Int) -> Int64? {
        precondition(scale >= 0, "scale must not be negative")
        let negative = text.hasPrefix("-")
        let unsigned = negative ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(separator: ".", omittingEmptySubsequences: false)
        let fraction = parts.count > 1 ? parts[1] : ""
        let kept = fraction.prefix(scale)
        guard fraction.dropFirst(scale).allSatisfy({ $0 == "0" }) else { return nil }
        let digits = parts[0] + kept + String(repeating: "0", count: scale - kept.count)
        // Parse with the sign attached so Int64.min still fits.
        return Int64((negative ? "-" : "") + digits)
    }

    public static func == (lhs: Numeric, rhs: Numeric) -> Bool {
        lhs.valueKey == rhs.valueKey
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(valueKey)
    }

    /// The text without trailing fractional zeros, so equal values have equal keys.
    private var valueKey: Substring {
        guard text.contains(".") else { return Substring(text) }
        var trimmed = Substring(text)
        while trimmed.last == "0" { trimmed = trimmed.dropLast() }
        if trimmed.last == "." { trimmed = trimmed.dropLast() }
        return trimmed == "-0" ? "0" : trimmed
    }

    /// Largest exponent accepted in `1e…` input, so a hostile `1e999999999` cannot exhaust memory.
    private static let maximumExponent = 1000

    private static func canonicalize(_ input: Substring) -> String? {
        var rest = input
        var negative = false
        if let sign = rest.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            rest = rest.dropFirst()
        }
        var exponent = 0
        if let e = rest.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let value = Int(rest[rest.index(after: e)...]), abs(value) <= maximumExponent else { return nil }
            exponent = value
            rest = rest[..<e]
        }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let integerDigits = parts[0]
        let fractionDigits = parts.count > 1 ? parts[1] : ""
        let allDigits = integerDigits + fractionDigits
        guard !allDigits.isEmpty, allDigits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }

        // Move the decimal point by the exponent, padding with zeros where it runs past the digits.
        var pointPosition = integerDigits.count + exponent
        var digits = String(allDigits)
        if pointPosition < 0 {
            digits = String(repeating: "0", count: -pointPosition) + digits
            pointPosition = 0
        } else if pointPosition > digits.count {
            digits += String(repeating: "0", count: pointPosition - digits.count)
        }
        let point = digits.index(digits.startIndex, offsetBy: pointPosition)
        var integerPart = digits[..<point].drop(while: { $0 == "0" })
        if integerPart.isEmpty { integerPart = "0" }
        let fractionPart = digits[point...]
        let isZero = !digits.contains(where: { $0 != "0" })
        let sign = negative && !isZero ? "-" : ""
        return sign + integerPart + (fractionPart.isEmpty ? "" : "." + fractionPart)
    }
}
