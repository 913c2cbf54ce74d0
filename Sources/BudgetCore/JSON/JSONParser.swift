import JSONText
/// Parses RFC 8259 JSON from UTF-8 bytes into `JSONValue`, keeping numbers as text and members in order.
///
/// A pure function over bytes: no I/O, bounded nesting so a hostile body cannot exhaust the stack.
public struct JSONParser {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// Byte offset where the document stopped making sense.
        public var offset: Int
        public var reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    public static let maximumDepth = 256

    public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.failure("unexpected data after the JSON value") }
        return value
    }

    private let bytes: [UInt8]
    private var position = 0

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func failure(_ reason: String) -> Failure { Failure(offset: position, reason: reason) }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maximumDepth else { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - position >= expected.count,
            bytes[position..<position + expected.count].elementsEqual(expected)
        else { throw failure("invalid literal") }
        position += expected.count
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        position += 1
        var members = JSONObject()
        skipWhitespace()
        if current == UInt8(ascii: "}") { position += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let name = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':' after a member name") }
            position += 1
            skipWhitespace()
            members[name] = try parseValue(depth: depth + 1)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: throw failure("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { position += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            default: throw failure("expected ',' or ']' in an array")
            }
        }
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as its text.
    private mutating func parseNumber() throws(Failure) -> String {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else {
            guard try skipDigits() > 0 else { throw failure("invalid number") }
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard try skipDigits() > 0 else { throw failure("a decimal point must be followed by digits") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard try skipDigits() > 0 else { throw failure("an exponent must have digits") }
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func skipDigits() throws(Failure) -> Int {
        let start = position
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
        return position - start
    }

    private mutating func parseString() throws(Failure) -> String {
        position += 1
        // Most strings hold no escape: the String is made from the bytes in place, not copied out byte by byte.
        let start = position
        while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 { position += 1 }
        if current == UInt8(ascii: "\"") {
            let end = position
            position += 1
            let text = bytes.withUnsafeBufferPointer { String(validating: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
            guard let text else { throw failure("string is not valid UTF-8") }
            return text
        }
        var utf8 = Array(bytes[start..<position])
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: utf8, as: UTF8.self) else { throw failure("string is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                try parseEscape(into: &utf8)
            case 0x00..<0x20:
                throw failure("control character in string")
            default:
                utf8.append(byte)
                position += 1
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(Failure) {
        guard let byte = current else { throw failure("unterminated escape") }
        position += 1
        if let unescaped = JSONQuoting.unescaped(byte) {
            utf8.append(unescaped)
            return
        }
        guard byte == UInt8(ascii: "u") else { throw failure("invalid escape") }
        var scalar = try parseHexQuad()
        if (0xD800..<0xDC00).contains(scalar) {
            // A high surrogate must be followed by an escaped low surrogate (RFC 8259 §7).
            guard current == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
            else { throw failure("unpaired surrogate") }
            position += 2
            let low = try parseHexQuad()
            guard (0xDC00..<0xE000).contains(low) else { throw failure("unpaired surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00..<0xE000).contains(scalar) {
            throw failure("unpaired surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid unicode escape") }
        utf8.append(contentsOf: String(Character(unicode)).utf8)
    }

    private mutating func parseHexQuad() throws(Failure) -> UInt32 {
        guard bytes.count - position >= 4 else { throw failure("truncated unicode escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid hex digit in unicode escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
