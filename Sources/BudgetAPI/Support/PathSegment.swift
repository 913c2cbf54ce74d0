/// Text written into one URL path segment.
enum PathSegment {
    /// `text` with every byte but RFC 3986 §2.3's unreserved characters percent-encoded (§2.1), so it stays
    /// one segment whatever it holds, and needs no escaping in an HTML attribute either.
    static func encoding(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            let isUnreserved =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~")].contains(byte)
            if isUnreserved {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return encoded
    }
}
