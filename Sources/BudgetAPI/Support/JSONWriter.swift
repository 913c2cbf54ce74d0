/// Writes `JSONValue` as compact RFC 8259 text: numbers exactly as they were read, members in order.
public enum JSONWriter {
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, to: &output)
        return output
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    private static func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: output += Array("null".utf8)
        case .bool(let flag): output += Array((flag ? "true" : "false").utf8)
        case .number(let literal): output += Array(literal.utf8)
        case .string(let text): writeString(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.name, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// RFC 8259 §7: quote, backslash and control characters must be escaped; all else passes as UTF-8.
    private static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
