#if canImport(Glibc)
    import Glibc
#endif

/// One element of an RFC 7239 `Forwarded` field: what one proxy saw of the request it passed on.
///
/// `Forwarded: for=192.0.2.60;proto=https;host=api.example.com, for=10.0.0.2` has two elements; the
/// first was written by the proxy nearest the client. Values are unquoted and checked: `forNode` and
/// `byNode` are nodes (§6), `proto` a URI scheme (§5.4), `host` a Host value (§5.3). Extension parameters
/// (§5.5) are checked as tokens and values and then dropped.
public struct ForwardedElement: Sendable, Equatable {
    /// The node that made the request to the proxy, e.g. `"192.0.2.60"`, `"2001:db8::17"`, `"unknown"` or
    /// an obfuscated `"_hidden"`; any port and IPv6 brackets are dropped.
    public var forNode: String?
    /// The interface where the proxy received the request, in the same form as `forNode`.
    public var byNode: String?
    /// The Host the proxy received, e.g. `"api.example.com"` or `"[2001:db8::1]:8443"`.
    public var host: String?
    /// The scheme the request came in with, lower-cased, e.g. `"https"`.
    public var proto: String?

    public init(forNode: String? = nil, byNode: String? = nil, host: String? = nil, proto: String? = nil) {
        (self.forNode, self.byNode, self.host, self.proto) = (forNode, byNode, host, proto)
    }

    /// The elements of every `Forwarded` line in order, or nil when any of them is malformed.
    ///
    /// Pure and strict: the grammar is RFC 7239 §4 (`1#forwarded-element`, pairs split by `;`, each value a
    /// token or a quoted-string), a parameter named twice in one element (§4: "MUST NOT occur more than
    /// once") or a value outside its parameter's syntax makes the whole field malformed. The only leniency
    /// is whitespace around `;`, which some proxies write. Empty list elements are skipped (RFC 9110 §5.6.1).
    public static func parseList(_ lines: [String]) -> [ForwardedElement]? {
        var elements: [ForwardedElement] = []
        for line in lines {
            var scanner = FieldScanner(Array(line.utf8))
            while true {
                scanner.skipWhitespace()
                if scanner.isAtEnd { break }
                if scanner.take(UInt8(ascii: ",")) { continue }
                guard let element = parseElement(&scanner) else { return nil }
                elements.append(element)
                scanner.skipWhitespace()
                if scanner.isAtEnd { break }
                guard scanner.take(UInt8(ascii: ",")) else { return nil }
            }
        }
        return elements.isEmpty ? nil : elements
    }

    /// `[ forwarded-pair ] *( ";" [ forwarded-pair ] )`, stopping before a `,` or the end.
    private static func parseElement(_ scanner: inout FieldScanner) -> ForwardedElement? {
        var element = ForwardedElement()
        var seen = Set<String>()
        while true {
            scanner.skipWhitespace()
            if scanner.isAtEnd || scanner.peek(UInt8(ascii: ",")) { return element }
            if scanner.take(UInt8(ascii: ";")) { continue }
            guard let name = scanner.token()?.lowercased(), scanner.take(UInt8(ascii: "=")),
                let value = scanner.token() ?? scanner.quotedString(), seen.insert(name).inserted
            else { return nil }
            switch name {
            case "for":
                guard let node = node(value) else { return nil }
                element.forNode = node
            case "by":
                guard let node = node(value) else { return nil }
                element.byNode = node
            case "host":
                guard isHost(value) else { return nil }
                element.host = value
            case "proto":
                guard isScheme(value) else { return nil }
                element.proto = value.lowercased()
            default:
                break  // an extension parameter (§5.5): well-formed, not ours
            }
            scanner.skipWhitespace()
            guard scanner.isAtEnd || scanner.peek(UInt8(ascii: ",")) || scanner.take(UInt8(ascii: ";")) else { return nil }
        }
    }

    /// RFC 7239 §6: `nodename [ ":" node-port ]`, returned without the port and the IPv6 brackets.
    package static func node(_ value: String) -> String? {
        let bytes = Array(value.utf8)
        let name: String
        let rest: ArraySlice<UInt8>
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            name = String(decoding: bytes[1..<close], as: UTF8.self)
            guard isIPv6(name) else { return nil }
            rest = bytes[(close + 1)...]
        } else {
            let colon = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.endIndex
            name = String(decoding: bytes[..<colon], as: UTF8.self)
            guard isIPv4(name) || name == "unknown" || isObfuscated(name[...]) else { return nil }
            rest = bytes[colon...]
        }
        if rest.isEmpty { return name }
        // node-port = port / obfport: 1*5DIGIT or "_" 1*(ALPHA / DIGIT / "." / "_" / "-")
        guard rest.first == UInt8(ascii: ":") else { return nil }
        let port = String(decoding: rest.dropFirst(), as: UTF8.self)
        guard isPort(port) || isObfuscated(port[...]) else { return nil }
        return name
    }

    /// RFC 7239 §6.3: `"_" 1*(ALPHA / DIGIT / "." / "_" / "-")`.
    private static func isObfuscated(_ text: Substring) -> Bool {
        text.utf8.count > 1 && text.first == "_" && text.utf8.allSatisfy { $0.isAlphanumeric || ".-_".utf8.contains($0) }
    }

    /// A Host value (RFC 9110 §7.2, `uri-host [ ":" port ]`) of the plain kind real names use: an IPv6
    /// literal in brackets, or letters, digits, `-`, `.`, `_` and `~`; no percent-encoding, no sub-delims,
    /// nothing that would need escaping inside a `Link` URL.
    public static func isHost(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        let rest: ArraySlice<UInt8>
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")),
                isIPv6(String(decoding: bytes[1..<close], as: UTF8.self))
            else { return false }
            rest = bytes[(close + 1)...]
        } else {
            let colon = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.endIndex
            let name = bytes[..<colon]
            guard !name.isEmpty, name.allSatisfy({ $0.isAlphanumeric || "-._~".utf8.contains($0) }) else { return false }
            rest = bytes[colon...]
        }
        if rest.isEmpty { return true }
        return rest.first == UInt8(ascii: ":") && isPort(String(decoding: rest.dropFirst(), as: UTF8.self))
    }

    /// RFC 3986 §3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    private static func isScheme(_ value: String) -> Bool {
        guard let first = value.utf8.first, first.isLetter else { return false }
        return value.utf8.allSatisfy { $0.isAlphanumeric || "+-.".utf8.contains($0) }
    }

    private static func isPort(_ text: String) -> Bool {
        (1...5).contains(text.utf8.count) && text.utf8.allSatisfy(\.isDigit) && Int(text)! <= 65535
    }

    /// A dotted-quad IPv4 address (RFC 3986 §3.2.2's `IPv4address`).
    public static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        // inet_pton takes only the four-part decimal form, unlike inet_aton.
        return text.utf8.allSatisfy { $0.isDigit || $0 == UInt8(ascii: ".") } && inet_pton(AF_INET, text, &address) == 1
    }

    /// An IPv6 address in RFC 4291 §2.2's text forms, without brackets or a zone.
    public static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return text.utf8.contains(UInt8(ascii: ":")) && inet_pton(AF_INET6, text, &address) == 1
    }
}

/// A cursor over one field value for the token and quoted-string grammar of RFC 9110 §5.6.
package struct FieldScanner {
    private let bytes: [UInt8]
    private var index = 0

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    package var isAtEnd: Bool { index == bytes.count }

    package func peek(_ byte: UInt8) -> Bool {
        index < bytes.count && bytes[index] == byte
    }

    package mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    package mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
    }

    /// RFC 9110 §5.6.2: `1*tchar`.
    package mutating func token() -> String? {
        let start = index
        while index < bytes.count, ASCII.isTokenCharacter(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// RFC 9110 §5.6.4: `DQUOTE *( qdtext / quoted-pair ) DQUOTE`, unescaped; nil (and nothing consumed)
    /// unless one is complete here.
    package mutating func quotedString() -> String? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        var cursor = index + 1
        var text: [UInt8] = []
        while cursor < bytes.count {
            let byte = bytes[cursor]
            switch byte {
            case UInt8(ascii: "\""):
                index = cursor + 1
                return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
                guard cursor + 1 < bytes.count, bytes[cursor + 1].isQuotable else { return nil }
                text.append(bytes[cursor + 1])
                cursor += 2
            default:
                // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
                guard byte.isQuotable else { return nil }
                text.append(byte)
                cursor += 1
            }
        }
        return nil
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { (0x30...0x39).contains(self) }
    fileprivate var isLetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
    fileprivate var isAlphanumeric: Bool { isDigit || isLetter }
    /// HTAB, SP, VCHAR and obs-text: what a quoted-string may carry.
    fileprivate var isQuotable: Bool { self == 0x09 || self == 0x20 || (0x21...0x7E).contains(self) || self >= 0x80 }
}
