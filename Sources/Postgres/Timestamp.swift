import Glibc

/// An instant in time with microsecond precision, PostgreSQL's `timestamptz`.
///
/// Stored as microseconds since 1970-01-01T00:00:00Z, the same resolution PostgreSQL keeps, so a value
/// read and written back is unchanged. `iso8601` renders it with milliseconds (`2026-11-21T08:00:00.000Z`);
/// `postgresText` keeps every microsecond.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible, PostgresEncodable, PostgresDecodable {
    public let microsecondsSinceEpoch: Int64

    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    /// The current time from the system's real-time clock.
    public static var now: Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(microsecondsSinceEpoch: Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000)
    }

    /// Parses `YYYY-MM-DD[T ]HH:MM:SS[.fraction]` followed by `Z` or a `±HH[:MM[:SS]]` offset.
    ///
    /// This reads both PostgreSQL's ISO output (`2026-11-21 08:00:00.5+00`) and ISO 8601 from clients
    /// (`2026-11-21T08:00:00.500Z`). A time without an offset is rejected: it names no instant.
    public init?(_ text: some StringProtocol) {
        let text = Substring(text)
        guard text.count >= 20, let separator = text.dropFirst(10).first, separator == "T" || separator == " ",
            let date = PostgresDate(text.prefix(10))
        else { return nil }
        var rest = text.dropFirst(11)
        guard let hour = Self.twoDigits(&rest, range: 0...23), rest.popFirst() == ":",
            let minute = Self.twoDigits(&rest, range: 0...59), rest.popFirst() == ":",
            let second = Self.twoDigits(&rest, range: 0...60)
        else { return nil }
        var micros: Int64 = 0
        if rest.first == "." {
            rest = rest.dropFirst()
            let fraction = rest.prefix(while: { $0.isASCII && $0.isNumber })
            guard !fraction.isEmpty else { return nil }
            rest = rest.dropFirst(fraction.count)
            // Digits past the sixth are below PostgreSQL's resolution and are dropped.
            let six = fraction.prefix(6) + String(repeating: "0", count: max(0, 6 - fraction.count))
            micros = Int64(six) ?? 0
        }
        guard let offsetSeconds = Self.offsetSeconds(rest) else { return nil }
        let localSeconds = Int64(date.daysSinceEpoch) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        microsecondsSinceEpoch = (localSeconds - Int64(offsetSeconds)) * 1_000_000 + micros
    }

    public init(postgresText: String) throws {
        guard let value = Timestamp(postgresText) else {
            throw PostgresError.decoding("not a timestamp with time zone", text: postgresText, type: "Timestamp")
        }
        self = value
    }

    /// A binary `timestamptz`: microseconds since 2000-01-01 00:00 UTC. `infinity` and `-infinity` name no
    /// instant and are refused, as their text is.
    public init(postgresBinary value: UnsafeRawBufferPointer, type: PostgresType) throws {
        guard type == .timestamptz else {
            try self.init(postgresText: PostgresBinary.text(value, type: type))
            return
        }
        guard value.count == 8 else { throw PostgresError(kind: .decoding, message: "a binary timestamptz has 8 bytes, not \(value.count)") }
        let microseconds = PostgresBinary.bigEndian(value)
        guard microseconds != .max, microseconds != .min else {
            throw PostgresError.decoding("not a finite timestamp", text: try PostgresBinary.text(value, type: type), type: "Timestamp")
        }
        self.init(microsecondsSinceEpoch: microseconds + PostgresBinary.epochDays * PostgresBinary.microsecondsPerDay)
    }

    /// ISO 8601 in UTC with milliseconds, e.g. `2026-11-21T08:00:00.000Z`.
    public var iso8601: String { render(fractionDigits: 3) }

    /// ISO 8601 in UTC with microseconds, which PostgreSQL reads back exactly.
    public var postgresText: String { render(fractionDigits: 6) }

    public var description: String { iso8601 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microsecondsSinceEpoch < rhs.microsecondsSinceEpoch
    }

    private func render(fractionDigits: Int) -> String {
        let (seconds, micros) = Self.floorDivide(microsecondsSinceEpoch, 1_000_000)
        let (days, secondOfDay) = Self.floorDivide(seconds, 86_400)
        let date = PostgresDate(daysSinceEpoch: Int(days))
        let time =
            CivilCalendar.pad(Int(secondOfDay / 3600), 2) + ":" + CivilCalendar.pad(Int(secondOfDay / 60 % 60), 2)
            + ":" + CivilCalendar.pad(Int(secondOfDay % 60), 2)
        let fraction = CivilCalendar.pad(Int(micros), 6).prefix(fractionDigits)
        return "\(date)T\(time).\(fraction)Z"
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    private static func twoDigits(_ text: inout Substring, range: ClosedRange<Int>) -> Int? {
        let digits = text.prefix(2)
        guard digits.count == 2, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let value = Int(digits), range.contains(value)
        else { return nil }
        text = text.dropFirst(2)
        return value
    }

    /// Seconds east of UTC for `Z`, `±HH`, `±HHMM`, `±HH:MM` or `±HH:MM:SS`.
    private static func offsetSeconds(_ text: Substring) -> Int? {
        if text == "Z" { return 0 }
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        var rest = text.dropFirst()
        guard let hours = twoDigits(&rest, range: 0...15) else { return nil }
        var total = hours * 3600
        for unit in [60, 1] where !rest.isEmpty {
            if rest.first == ":" { rest = rest.dropFirst() }
            guard let value = twoDigits(&rest, range: 0...59) else { return nil }
            total += value * unit
        }
        guard rest.isEmpty else { return nil }
        return sign == "-" ? -total : total
    }
}
