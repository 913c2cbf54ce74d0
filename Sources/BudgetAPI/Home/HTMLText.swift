/// HTML built by appending, where every piece of data goes through `text(_:)` or `href(_:)`.
///
/// The page's own markup is appended with `markup(_:)`; nothing else reaches the output unescaped.
struct HTMLText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    /// Our own markup, written as is: never pass data here.
    mutating func markup(_ html: String) {
        bytes.append(contentsOf: html.utf8)
    }

    /// Data as text, safe in element content and in a quoted attribute value: `&`, `<`, `>`, `"` and `'`
    /// become character references (HTML Living Standard §13.1.4), so no value can end an element or
    /// an attribute.
    mutating func text(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&#39;".utf8)
            default: bytes.append(byte)
            }
        }
    }

    /// A root-relative link to the path segments given, for an `href="…"`: each segment is percent-encoded
    /// (`PathSegment`), so it stays one segment and needs no HTML escaping.
    mutating func href(_ segments: String...) {
        for segment in segments {
            bytes.append(UInt8(ascii: "/"))
            bytes.append(contentsOf: PathSegment.encoding(segment).utf8)
        }
    }
}
