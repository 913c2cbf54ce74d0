/// JSON string literals (RFC 8259 §7), the one escaper every module uses: problem answers, JSON log lines
/// and the records the API renders.
///
/// RFC 8259 asks only that quote, backslash and control characters be escaped. The choices here are
/// PostgreSQL's `to_json` choices (`\b`, `\f`, `\n`, `\r`, `\t`, else lowercase `\u00xx`), so that a record
/// rendered in Swift has the bytes of the same record rendered in SQL (the change feed's).
public enum JSONQuoting {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends the UTF-8 text `utf8` as a JSON string literal, quotes included. Runs without an escape are
    /// copied whole: most text has none.
    public static func append(utf8: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var runStart = 0
        for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            output.append(contentsOf: utf8[runStart..<index])
            runStart = index + 1
            output.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
            case 0x08: output.append(UInt8(ascii: "b"))
            case 0x0C: output.append(UInt8(ascii: "f"))
            case 0x0A: output.append(UInt8(ascii: "n"))
            case 0x0D: output.append(UInt8(ascii: "r"))
            case 0x09: output.append(UInt8(ascii: "t"))
            default:
                output += [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        output.append(contentsOf: utf8[runStart...])
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `text` as a JSON string literal, quotes included.
    public static func append(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { append(utf8: UnsafeRawBufferPointer($0), to: &output) }
    }
}

extension String {
    /// The string as a JSON string literal, quotes included (see `JSONQuoting`).
    public var jsonQuoted: String {
        var output: [UInt8] = []
        JSONQuoting.append(self, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}

extension JSONQuoting {
    /// The byte a one-character escape stands for (`n` in `\n` is a line feed, RFC 8259 §7); nil for
    /// `u`, whose four hex digits the caller reads, and for anything that is no escape at all.
    public static func unescaped(_ escape: UInt8) -> UInt8? {
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escape
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }
}
