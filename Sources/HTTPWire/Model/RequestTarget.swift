/// The path and query of a request-target, percent-decoded (RFC 3986 §2.1).
package struct RequestTarget: Sendable {
    package var path: String
    package var query: [(name: String, value: String)]

    package init(path: String, query: [(name: String, value: String)]) {
        self.path = path
        self.query = query
    }

    /// Splits and decodes `target`; nil when a percent escape is malformed or decodes to invalid UTF-8.
    package init?(_ target: String) {
        var rawPath = Substring(target)
        var rawQuery: Substring?
        // In ASCII every character is one byte (CR LF aside, which holds no "?"), so the byte search finds
        // the same "?" as the Character search, without breaking the text into grapheme clusters.
        let isASCII = target.utf8.allSatisfy { $0 < 0x80 }
        if let mark = isASCII ? target.utf8.firstIndex(of: UInt8(ascii: "?")) : target.firstIndex(of: "?") {
            rawPath = target[..<mark]
            rawQuery = target[target.index(after: mark)...]
        }
        // RFC 9112 §3.2.2: absolute-form is accepted; only its path and query matter here.
        if !rawPath.hasPrefix("/"), let colon = rawPath.firstIndex(of: ":"), rawPath[colon...].hasPrefix("://") {
            let authorityAndPath = rawPath[colon...].dropFirst(3)
            rawPath = authorityAndPath.firstIndex(of: "/").map { authorityAndPath[$0...] } ?? "/"
        }
        guard let path = Self.percentDecoded(rawPath, plusIsSpace: false) else { return nil }
        var query: [(name: String, value: String)] = []
        for item in rawQuery?.split(separator: "&") ?? [] {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.percentDecoded(parts[0], plusIsSpace: true),
                let value = Self.percentDecoded(parts.count > 1 ? parts[1] : "", plusIsSpace: true)
            else { return nil }
            query.append((name: name, value: value))
        }
        self.init(path: path, query: query)
    }

    package static func percentDecoded(_ text: Substring, plusIsSpace: Bool) -> String? {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// The value of one hexadecimal digit, or nil.
package func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}
