import Postgres
import TestSupport
import Testing

@Suite("Binary results: each type's binary form reads as its text")
struct BinaryResultTests {
    /// A binary `numeric` (`numeric_send`): count, weight, sign, display scale, then the base-10000 digits.
    private static func numeric(weight: Int16, sign: UInt16 = 0, scale: Int16, _ digits: [Int16]) -> [UInt8] {
        let words = [Int16(digits.count), weight, Int16(bitPattern: sign), scale] + digits
        return words.flatMap { [UInt8(truncatingIfNeeded: UInt16(bitPattern: $0) >> 8), UInt8(truncatingIfNeeded: $0)] }
    }

    private static func text(_ bytes: [UInt8], _ type: PostgresType) -> String? {
        var output: [UInt8] = []
        let read = bytes.withUnsafeBytes { PostgresBinary.appendText($0, type: type, to: &output) }
        return read ? String(decoding: output, as: UTF8.self) : nil
    }

    private static func bigEndian(_ value: Int64, bytes: Int) -> [UInt8] {
        (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    @Test(arguments: [
        (numeric(weight: 0, scale: 0, []), "0"),
        (numeric(weight: 0, scale: 2, []), "0.00"),
        (numeric(weight: 0, sign: 0x4000, scale: 2, [12, 5000]), "-12.50"),
        (numeric(weight: -2, scale: 6, [100]), "0.000001"),
        (numeric(weight: -1, scale: 10, [5]), "0.0005000000"),
        (numeric(weight: 5, scale: 0, [1]), "100000000000000000000"),
        (numeric(weight: 2, scale: 3, [12, 3456, 7890, 1230]), "1234567890.123"),
        (numeric(weight: 0, scale: 0, [0, 0]), "0"),
        (numeric(weight: 0, sign: 0xC000, scale: 0, []), "NaN"),
        (numeric(weight: 0, sign: 0xD000, scale: 0, []), "Infinity"),
        (numeric(weight: 0, sign: 0xF000, scale: 0, []), "-Infinity"),
    ])
    func numericPrintsAsNumericOut(bytes: [UInt8], text: String) {
        #expect(Self.text(bytes, .numeric) == text)
    }

    @Test func malformedNumericIsRefused() {
        #expect(Self.text([0, 1, 0, 0], .numeric) == nil)
        #expect(Self.text(Self.numeric(weight: 0, scale: 0, [12_000]), .numeric) == nil)
        #expect(Self.text(Array(Self.numeric(weight: 0, scale: 0, [1, 2]).dropLast()), .numeric) == nil)
    }

    @Test func decimalsKeepTheirScaleAndRefuseWhatIsNoNumber() throws {
        let decimal = try Self.numeric(weight: 0, sign: 0x4000, scale: 2, [12, 5000]).withUnsafeBytes {
            try PostgresDecimal(postgresBinary: $0, type: .numeric)
        }
        #expect(decimal.description == "-12.50" && decimal.isNegative && decimal.scale == 2)
        #expect(decimal == PostgresDecimal("-12.50"))
        #expect(PostgresDecimal("0.05")?.digits == Array("005".utf8))
        for special: UInt16 in [0xC000, 0xD000, 0xF000] {
            #expect(throws: PostgresError.self) {
                try Self.numeric(weight: 0, sign: special, scale: 0, []).withUnsafeBytes { try PostgresDecimal(postgresBinary: $0, type: .numeric) }
            }
        }
        #expect(PostgresDecimal("NaN") == nil)
        #expect(PostgresDecimal("1.") == nil)
    }

    @Test func timestampsBeforeAndAfter2000AndInfinity() throws {
        let cases: [(Int64, String)] = [
            (0, "2000-01-01 00:00:00+00"),
            (-500_000, "1999-12-31 23:59:59.5+00"),
            (-946_684_800_000_000, "1970-01-01 00:00:00+00"),
            (848_563_200_123_400, "2026-11-21 08:00:00.1234+00"),
            (-63_082_368_000_000_000, "0001-12-31 00:00:00+00 BC"),
            (.max, "infinity"), (.min, "-infinity"),
        ]
        for (microseconds, text) in cases {
            #expect(Self.text(Self.bigEndian(microseconds, bytes: 8), .timestamptz) == text)
        }
        let before2000 = try Self.bigEndian(-500_000, bytes: 8).withUnsafeBytes { try Timestamp(postgresBinary: $0, type: .timestamptz) }
        #expect(before2000 == Timestamp("1999-12-31T23:59:59.5Z"))
        #expect(throws: PostgresError.self) {
            try Self.bigEndian(.max, bytes: 8).withUnsafeBytes { try Timestamp(postgresBinary: $0, type: .timestamptz) }
        }
    }

    @Test func datesBeforeAndAfter2000() throws {
        #expect(Self.text(Self.bigEndian(-1, bytes: 4), .date) == "1999-12-31")
        #expect(Self.text(Self.bigEndian(9821, bytes: 4), .date) == "2026-11-21")
        #expect(Self.text(Self.bigEndian(Int64(Int32.max), bytes: 4), .date) == "infinity")
        #expect(Self.text(Self.bigEndian(-730_120, bytes: 4), .date) == "0001-12-31 BC")
        let date = try Self.bigEndian(-1, bytes: 4).withUnsafeBytes { try PostgresDate(postgresBinary: $0, type: .date) }
        #expect(date == PostgresDate(year: 1999, month: 12, day: 31))
        #expect(throws: PostgresError.self) {
            try Self.bigEndian(-730_120, bytes: 4).withUnsafeBytes { try PostgresDate(postgresBinary: $0, type: .date) }
        }
    }

    @Test func integersRefuseWhatTheirTypeCannotHold() throws {
        let big = Self.bigEndian(Int64(Int32.max) + 1, bytes: 8)
        #expect(try big.withUnsafeBytes { try Int64(postgresBinary: $0, type: .int8) } == Int64(Int32.max) + 1)
        #expect(throws: PostgresError.self) { try big.withUnsafeBytes { try Int32(postgresBinary: $0, type: .int8) } }
        #expect(try Self.bigEndian(-2, bytes: 2).withUnsafeBytes { try Int(postgresBinary: $0, type: .int2) } == -2)
    }

    /// Every type the layer reads in binary, from the real server: the text of each binary value is the text the
    /// server sends, and each decodes to the same value both ways.
    @Test func binaryRoundTripsEqualTheText() async throws {
        let connection = try Connection.connect(to: try await TestDatabase.empty())
        try connection.execute("CREATE DOMAIN money_amount AS numeric(14,2)")
        let values = [
            "1::int2", "'-32768'::int2", "2147483647::int4", "'-9223372036854775808'::int8", "true", "false",
            "'héllo \"q\"'::text", "'v'::varchar(3)", "'ab'::char(3)",
            "0::numeric", "0.00::numeric", "-12.50::numeric(14,2)", "0.000001::numeric", "1e20::numeric",
            "123456789.123456789::numeric", "-0.5::numeric", "'NaN'::numeric", "'-Infinity'::numeric",
            "-12.5::money_amount",
            "'2026-11-21 08:00:00.1234+00'::timestamptz", "'1969-07-20 20:17:40+00'::timestamptz",
            "'0044-03-15 12:00:00+00 BC'::timestamptz", "'infinity'::timestamptz", "'2026-11-21 08:00:00.000001+00'::timestamptz",
            "'2026-11-21'::date", "'1999-12-31'::date", "'0044-03-15 BC'::date", "'-infinity'::date",
            "'{\"a\": [1, 2.50]}'::json", "'{\"b\": 2.50, \"a\": null}'::jsonb",
        ]
        let query = Query(unsafeSQL: "SELECT " + values.joined(separator: ", "))
        let text = try connection.query(query)[0]
        let binary = try connection.query(query.inBinary())[0]
        for index in values.indices {
            #expect(binary.column(index) == text.column(index), "\(values[index])")
        }
        #expect(try binary.decode(Int16.self, at: 1) == -32768)
        #expect(try binary.decode(Int64.self, at: 3) == Int64.min)
        #expect(try binary.decode(Bool.self, at: 4) && !binary.decode(Bool.self, at: 5))
        #expect(try binary.decode(String.self, at: 6) == "héllo \"q\"")
        #expect(try binary.decode(PostgresDecimal.self, at: 11) == text.decode(PostgresDecimal.self, at: 11))
        #expect(try binary.decode(PostgresDecimal.self, at: 18).description == "-12.50")
        #expect(try binary.decode(Timestamp.self, at: 19) == text.decode(Timestamp.self, at: 19))
        #expect(try binary.decode(Timestamp.self, at: 20) == text.decode(Timestamp.self, at: 20))
        #expect(try binary.decode(PostgresDate.self, at: 25) == text.decode(PostgresDate.self, at: 25))
        #expect(try binary.decode(PostgresDate.self, at: 24) == text.decode(PostgresDate.self, at: 24))
        #expect(throws: PostgresError.self) { try binary.decode(PostgresDate.self, at: 26) }
        #expect(try binary.decode(String.self, at: 29) == text.decode(String.self, at: 29))
        #expect(throws: PostgresError.self) { try binary.decode(PostgresDecimal.self, at: 16) }
    }
}
