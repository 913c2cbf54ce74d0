import Foundation
import JSONText

/// Finds where each value of a JSON text (RFC 8259) begins and ends, without converting it.
///
/// Records are kept as the bytes the server sent, so a number keeps every digit (`400.00` stays
/// `400.00`); only the few members the protocol needs (`seq`, `id`, `op`, …) are read as values.
struct JSONScanner {
    let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The members of the object at `range`, each name with the range of its value.
    static func members(of bytes: [UInt8], in range: Range<Int>) throws -> [String: Range<Int>] {
        var scanner = JSONScanner(bytes)
        scanner.index = range.lowerBound
        var members: [String: Range<Int>] = [:]
        try scanner.container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { scanner in
            let name = try scanner.string()
            try scanner.expect(UInt8(ascii: ":"))
            members[name] = try scanner.value()
        }
        return members
    }

    /// The ranges of the elements of the array at `range`.
    static func elements(of bytes: [UInt8], in range: Range<Int>) throws -> [Range<Int>] {
        var scanner = JSONScanner(bytes)
        scanner.index = range.lowerBound
        var elements: [Range<Int>] = []
        try scanner.container(open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { scanner in
            elements.append(try scanner.value())
        }
        return elements
    }

    /// The string at `range`, unescaped.
    static func string(in bytes: [UInt8], at range: Range<Int>) throws -> String {
        var scanner = JSONScanner(bytes)
        scanner.index = range.lowerBound
        return try scanner.string()
    }

    /// The whole number at `range`, or nil for anything else.
    static func integer(in bytes: [UInt8], at range: Range<Int>) -> Int? {
        Int(String(decoding: bytes[range], as: UTF8.self))
    }

    /// The value's text: a string unescaped, anything else (a number) as written.
    static func text(in bytes: [UInt8], at range: Range<Int>) throws -> String {
        bytes[range.lowerBound] == UInt8(ascii: "\"")
            ? try string(in: bytes, at: range) : String(decoding: bytes[range], as: UTF8.self)
    }

    private mutating func skipWhitespace() {
        // RFC 8259 §2: space, horizontal tab, line feed, carriage return.
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { throw SyncError.malformedAnswer("expected \(Character(UnicodeScalar(byte)))") }
        index += 1
    }

    private mutating func container(open: UInt8, close: UInt8, _ each: (inout JSONScanner) throws -> Void) throws {
        try expect(open)
        skipWhitespace()
        if index < bytes.count, bytes[index] == close { index += 1; return }
        while true {
            try each(&self)
            skipWhitespace()
            guard index < bytes.count else { throw SyncError.malformedAnswer("unterminated container") }
            let byte = bytes[index]
            index += 1
            if byte == close { return }
            guard byte == UInt8(ascii: ",") else { throw SyncError.malformedAnswer("expected , between values") }
        }
    }

    /// Skips one value and answers its range.
    private mutating func value() throws -> Range<Int> {
        skipWhitespace()
        guard index < bytes.count else { throw SyncError.malformedAnswer("missing value") }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try container(open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { scanner in
                _ = try scanner.skipString()
                try scanner.expect(UInt8(ascii: ":"))
                _ = try scanner.value()
            }
        case UInt8(ascii: "["): try container(open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { _ = try $0.value() }
        case UInt8(ascii: "\""): _ = try skipString()
        default:
            // A number, true, false or null: everything up to the next delimiter.
            scalar: while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"): break scalar
                default: index += 1
                }
            }
        }
        return start..<index
    }

    private mutating func string() throws -> String {
        let (contents, hasEscapes) = try skipString()
        guard hasEscapes else { return String(decoding: bytes[contents], as: UTF8.self) }
        return try Self.unescaping(bytes[contents])
    }

    /// Moves past one string without making it: a record's values are skipped, never read.
    private mutating func skipString() throws -> (contents: Range<Int>, hasEscapes: Bool) {
        try expect(UInt8(ascii: "\""))
        let start = index
        var hasEscapes = false
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\") { hasEscapes = true; index += 1 }
            index += 1
        }
        guard index < bytes.count else { throw SyncError.malformedAnswer("unterminated string") }
        index += 1
        return (start..<(index - 1), hasEscapes)
    }

    /// A string's contents with its escapes undone (RFC 8259 §7). The one-character escapes are the
    /// common case (every ETag in the feed has two); `\u` sequences, surrogate pairs included, go to
    /// Foundation's decoder.
    private static func unescaping(_ contents: ArraySlice<UInt8>) throws -> String {
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(contents.count)
        var position = contents.startIndex
        while position < contents.endIndex {
            let byte = contents[position]
            position += 1
            guard byte == UInt8(ascii: "\\") else { unescaped.append(byte); continue }
            guard position < contents.endIndex else { throw SyncError.malformedAnswer("a string ends in a backslash") }
            let escaped = contents[position]
            position += 1
            if let byte = JSONQuoting.unescaped(escaped) {
                unescaped.append(byte)
            } else if escaped == UInt8(ascii: "u") {
                return try JSONDecoder().decode(String.self, from: Data([UInt8(ascii: "\"")] + contents + [UInt8(ascii: "\"")]))
            } else {
                throw SyncError.malformedAnswer("a string with the escape \\\(Character(UnicodeScalar(escaped)))")
            }
        }
        return String(decoding: unescaped, as: UTF8.self)
    }
}
