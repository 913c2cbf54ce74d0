/// A column's type as the server describes it in a result (`PQftype`): a domain's column reports its base type.
public struct PostgresType: Sendable, Hashable, CustomStringConvertible {
    public let oid: UInt32

    public init(oid: UInt32) {
        self.oid = oid
    }

    // The built-in types' OIDs are fixed (PostgreSQL's pg_type.dat).
    public static let bool = PostgresType(oid: 16)
    public static let bytea = PostgresType(oid: 17)
    public static let name = PostgresType(oid: 19)
    public static let int8 = PostgresType(oid: 20)
    public static let int2 = PostgresType(oid: 21)
    public static let int4 = PostgresType(oid: 23)
    public static let text = PostgresType(oid: 25)
    public static let json = PostgresType(oid: 114)
    public static let unknown = PostgresType(oid: 705)
    public static let bpchar = PostgresType(oid: 1042)
    public static let varchar = PostgresType(oid: 1043)
    public static let date = PostgresType(oid: 1082)
    public static let timestamptz = PostgresType(oid: 1184)
    public static let numeric = PostgresType(oid: 1700)
    public static let jsonb = PostgresType(oid: 3802)

    public var description: String { "type \(oid)" }
}

/// The binary result formats of the types this layer reads (each type's `*send` function in PostgreSQL), and
/// the text the server would have printed for the same value, so that a caller that asked for binary results
/// (`Query.inBinary`) sees the text it always saw.
///
/// Binary results spare the server its output functions, the costly ones being `numeric_out` and
/// `timestamptz_out` (bench/README.md, The list): this process turns the numbers into text instead, which
/// scales out where PostgreSQL does not. Every value is big-endian. The text assumes the session this layer
/// opens (`SessionSettings`: `DateStyle=ISO`, `TimeZone=UTC`).
public enum PostgresBinary {
    /// Whether `type`'s binary form is its text's bytes (text, `json` and their kin), so it needs no conversion.
    static func isText(_ type: PostgresType) -> Bool {
        switch type {
        case .text, .varchar, .bpchar, .name, .json, .unknown: true
        default: false
        }
    }

    /// Appends the text PostgreSQL prints for `value`, a binary value of `type`; false (appending nothing) when
    /// this layer cannot print the type or the value is malformed.
    public static func appendText(_ value: UnsafeRawBufferPointer, type: PostgresType, to output: inout [UInt8]) -> Bool {
        if isText(type) {
            output.append(contentsOf: value)
            return true
        }
        switch type {
        case .jsonb:
            // jsonb_send: a version byte (1), then the JSON text.
            guard value.first == 1 else { return false }
            output.append(contentsOf: value.dropFirst())
        case .bool:
            guard value.count == 1 else { return false }
            output.append(value[0] == 0 ? UInt8(ascii: "f") : UInt8(ascii: "t"))
        case .int2, .int4, .int8:
            guard let integer = integer(value) else { return false }
            appendDecimal(integer, to: &output)
        case .numeric: return appendNumeric(value, to: &output)
        case .date:
            guard value.count == 4 else { return false }
            appendDate(Int32(truncatingIfNeeded: bigEndian(value)), to: &output)
        case .timestamptz:
            guard value.count == 8 else { return false }
            appendTimestamp(bigEndian(value), to: &output)
        default: return false
        }
        return true
    }

    /// `value`'s text as a String, for a decoder that reads text; throws for a type this layer cannot print.
    static func text(_ value: UnsafeRawBufferPointer, type: PostgresType) throws -> String {
        var text: [UInt8] = []
        guard appendText(value, type: type, to: &text) else {
            throw PostgresError(kind: .decoding, message: "cannot read binary \(type) (\(value.count) bytes)")
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// An `int2`, `int4` or `int8` by its width; nil for another width.
    static func integer(_ value: UnsafeRawBufferPointer) -> Int64? {
        switch value.count {
        case 2: Int64(Int16(truncatingIfNeeded: bigEndian(value)))
        case 4: Int64(Int32(truncatingIfNeeded: bigEndian(value)))
        case 8: bigEndian(value)
        default: nil
        }
    }

    /// The bytes as one big-endian two's complement integer (at most 8 bytes).
    @inline(__always)
    static func bigEndian(_ value: UnsafeRawBufferPointer) -> Int64 {
        var result: UInt64 = 0
        for byte in value { result = result << 8 | UInt64(byte) }
        return Int64(bitPattern: result)
    }

    static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, minimumWidth: 1, to: &output)
    }

    /// `value`'s decimal digits, padded with leading zeros to `minimumWidth`, written in place (no allocation).
    @inline(__always)
    static func appendDigits(_ value: UInt64, minimumWidth: Int, to output: inout [UInt8]) {
        var width = 1
        var power: UInt64 = 10
        while value >= power {
            width += 1
            let (next, overflow) = power.multipliedReportingOverflow(by: 10)
            if overflow { break }
            power = next
        }
        width = max(width, minimumWidth)
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width))
        var rest = value
        var index = start + width - 1
        while rest > 0 {
            output[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
    }

    // MARK: numeric

    /// Appends the text `numeric_out` prints for a binary `numeric` (`numeric_send`: the count of base-10000
    /// digits, the weight of the first, the sign, the display scale, then the digits): the exact decimal with its
    /// scale, `NaN`, `Infinity` or `-Infinity`. False for a malformed value.
    public static func appendNumeric(_ value: UnsafeRawBufferPointer, to output: inout [UInt8]) -> Bool {
        guard value.count >= 8 else { return false }
        let word = { (index: Int) in Int(Int16(truncatingIfNeeded: bigEndian(UnsafeRawBufferPointer(rebasing: value[index..<(index + 2)])))) }
        let count = word(0)
        let weight = word(2)
        let sign = UInt16(truncatingIfNeeded: word(4))
        let scale = word(6)
        guard count >= 0, scale >= 0, value.count == 8 + 2 * count else { return false }
        switch sign {
        case 0x0000, 0x4000: break
        case 0xC000: output += Array("NaN".utf8)
        case 0xD000: output += Array("Infinity".utf8)
        case 0xF000: output += Array("-Infinity".utf8)
        default: return false
        }
        guard sign & 0xBFFF == 0 else { return true }
        let digit = { (index: Int) -> UInt64 in
            guard index >= 0, index < count else { return 0 }
            return UInt64(UInt16(truncatingIfNeeded: word(8 + 2 * index)))
        }
        guard (0..<count).allSatisfy({ digit($0) < 10_000 }) else { return false }
        if sign == 0x4000 { output.append(UInt8(ascii: "-")) }
        // The integer part: the groups 0...weight, the first without its leading zeros; "0" when there are none.
        var index: Int
        if weight < 0 {
            output.append(UInt8(ascii: "0"))
            index = weight + 1
        } else {
            appendDigits(digit(0), minimumWidth: 1, to: &output)
            for group in stride(from: 1, through: weight, by: 1) { appendDigits(digit(group), minimumWidth: 4, to: &output) }
            index = weight + 1
        }
        // The fraction: exactly `scale` digits, the last group cut to fit.
        if scale > 0 {
            output.append(UInt8(ascii: "."))
            var left = scale
            while left > 0 {
                let group = digit(index)
                for divisor: UInt64 in [1000, 100, 10, 1] where left > 0 {
                    output.append(UInt8(ascii: "0") + UInt8(group / divisor % 10))
                    left -= 1
                }
                index += 1
            }
        }
        return true
    }

    // MARK: date and time

    /// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch for binary dates and times.
    static let epochDays: Int64 = 10_957
    static let microsecondsPerDay: Int64 = 86_400_000_000

    /// Appends `date_out`'s ISO text for a binary date (days since 2000-01-01): `2026-11-21`, a year before 1
    /// as `0044-03-15 BC`, `infinity` and `-infinity`.
    static func appendDate(_ days: Int32, to output: inout [UInt8]) {
        switch days {
        case .max: return output += Array("infinity".utf8)
        case .min: return output += Array("-infinity".utf8)
        default: break
        }
        let isBC = appendCivilDate(Int64(days), to: &output)
        if isBC { output += Array(" BC".utf8) }
    }

    /// Appends `timestamptz_out`'s ISO text in UTC for a binary timestamp (microseconds since 2000-01-01): the
    /// date, the time, the fraction without trailing zeros (none when zero), `+00`, and ` BC` for a year before 1.
    static func appendTimestamp(_ microseconds: Int64, to output: inout [UInt8]) {
        switch microseconds {
        case .max: return output += Array("infinity".utf8)
        case .min: return output += Array("-infinity".utf8)
        default: break
        }
        let (days, time) = floorDivide(microseconds, microsecondsPerDay)
        let isBC = appendCivilDate(days, to: &output)
        let seconds = time / 1_000_000
        output.append(UInt8(ascii: " "))
        appendDigits(UInt64(seconds / 3600), minimumWidth: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(UInt64(seconds / 60 % 60), minimumWidth: 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendDigits(UInt64(seconds % 60), minimumWidth: 2, to: &output)
        var fraction = time % 1_000_000
        if fraction > 0 {
            var width = 6
            while fraction % 10 == 0 {
                fraction /= 10
                width -= 1
            }
            output.append(UInt8(ascii: "."))
            appendDigits(UInt64(fraction), minimumWidth: width, to: &output)
        }
        output += Array("+00".utf8)
        if isBC { output += Array(" BC".utf8) }
    }

    /// Appends `YYYY-MM-DD` for the day `days` after 2000-01-01 (proleptic Gregorian, as PostgreSQL counts);
    /// a year before 1 is written as its BC year (0 is 1 BC), and the answer says so.
    private static func appendCivilDate(_ days: Int64, to output: inout [UInt8]) -> Bool {
        let (year, month, day) = CivilCalendar.civilDate(fromDaysSinceEpoch: Int(days + epochDays))
        let isBC = year <= 0
        appendDigits(UInt64(isBC ? 1 - year : year), minimumWidth: 4, to: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(UInt64(month), minimumWidth: 2, to: &output)
        output.append(UInt8(ascii: "-"))
        appendDigits(UInt64(day), minimumWidth: 2, to: &output)
        return isBC
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }
}
