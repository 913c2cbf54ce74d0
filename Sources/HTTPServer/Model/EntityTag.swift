import Crypto

/// An entity tag: the validator a server sends in `ETag` and a client echoes in `If-Match` and
/// `If-None-Match` (RFC 9110 §8.8.3).
public struct EntityTag: Sendable, Hashable {
    /// The characters between the quotes; etagc characters only (RFC 9110 §8.8.3), so no `"`, space or control.
    public let opaqueTag: String
    /// A weak tag promises semantic equivalence only, so it never passes a strong comparison.
    public let isWeak: Bool

    public init(opaqueTag: String, isWeak: Bool = false) {
        self.opaqueTag = opaqueTag
        self.isWeak = isWeak
    }

    /// A strong tag for a representation: its body and the values of `headerNames` in `response.headers`.
    ///
    /// SHA-256 rather than Swift's `Hasher`, whose seed changes per process: replicas and restarts must
    /// hand out the same tag for the same bytes, or every client cache would miss after a deploy.
    /// Every part is length-prefixed, so moving a byte from the body into a header (or from one header
    /// into the next) changes the tag, and an absent header differs from an empty one.
    public static func strong(for response: Response, including headerNames: [String]) -> EntityTag {
        strong(body: response.body[...], headerValues: headerNames.lazy.map { response.headers.values(for: $0) })
    }

    /// The tag `strong(for:including:)` gives an answer with this body and these values of its tagged
    /// headers (one list per header name, in the same order; empty where the answer lacks the header):
    /// for a representation that is not an answer yet, such as a record inside a larger body.
    public static func strong(body: ArraySlice<UInt8>, headerValues: some Sequence<[String]>) -> EntityTag {
        var hash = SHA256()
        hash.updateWithLength(body.count)
        // Through the buffer: the generic DataProtocol path walks the slice's regions, which the change
        // feed (a tag per record, thousands per page) pays for visibly.
        body.withUnsafeBytes { hash.update(bufferPointer: $0) }
        for values in headerValues {
            hash.updateWithLength(values.count)
            for value in values { hash.updateWithLengthPrefix(Array(value.utf8)) }
        }
        return EntityTag(opaqueTag: hexPrefix(of: hash.finalize()))
    }

    /// A weak tag for a representation known by what determines it rather than by its bytes, such as a
    /// streamed answer that cannot be hashed before it is sent: the hash of `parts` (each length-prefixed).
    /// Sound only when equal parts mean an equivalent representation (RFC 9110 §8.8.1); the caller's to argue.
    public static func weak(identifying parts: some Sequence<String>) -> EntityTag {
        var hash = SHA256()
        for part in parts { hash.updateWithLengthPrefix(Array(part.utf8)) }
        return EntityTag(opaqueTag: hexPrefix(of: hash.finalize()), isWeak: true)
    }

    /// The first 128 bits of a digest in lowercase hexadecimal: collisions out of reach, a short header.
    private static func hexPrefix(of digest: SHA256.Digest) -> String {
        let hex = digest.withUnsafeBytes { digest in
            [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
                for index in 0..<16 {
                    buffer[2 * index] = hexDigits[Int(digest[index] >> 4)]
                    buffer[2 * index + 1] = hexDigits[Int(digest[index] & 0x0F)]
                }
                count = 32
            }
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The tag as it is written in `ETag`: `"abc"` or `W/"abc"`.
    public var headerValue: String {
        (isWeak ? "W/\"" : "\"") + opaqueTag + "\""
    }

    /// RFC 9110 §8.8.3.2: strong comparison needs both tags strong and the opaque tags equal.
    func matchesStrongly(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag == other.opaqueTag
    }

    /// RFC 9110 §8.8.3.2: weak comparison ignores the W/ prefix on either side.
    func matchesWeakly(_ other: EntityTag) -> Bool {
        opaqueTag == other.opaqueTag
    }

    /// One entity tag written alone, as in an `ETag` header; nil when it is anything else.
    init?(headerValue: String) {
        guard case .tags(let tags) = EntityTagCondition(headerValue: headerValue), tags.count == 1 else { return nil }
        self = tags[0]
    }
}

/// The value of If-Match / If-None-Match: `*` or a comma-separated list of entity tags (RFC 9110 §8.8.3, §13.1.1-2).
public enum EntityTagCondition: Sendable, Equatable {
    case any
    case tags([EntityTag])

    /// nil when the value is not `*` and not a valid list of entity-tags.
    ///
    /// The grammar is RFC 9110's `"*" / #entity-tag`: quoted opaque tags of etagc characters with an optional
    /// case-sensitive `W/`, OWS around the commas, and empty list elements accepted as §5.6.1 requires,
    /// as long as at least one tag is there.
    /// A comma may sit inside a tag (etagc includes it), so the list is scanned, never split on commas.
    public init?(headerValue: String) {
        let bytes = Array(headerValue.utf8)
        var index = 0
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == ASCII.space || bytes[index] == ASCII.tab { index += 1 }
        }
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "*") {
            index += 1
            skipWhitespace()
            guard index == bytes.count else { return nil }
            self = .any
            return
        }
        var tags: [EntityTag] = []
        while true {
            skipWhitespace()
            guard index < bytes.count else { break }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard let tag = Self.entityTag(in: bytes, at: &index) else { return nil }
            tags.append(tag)
            skipWhitespace()
            guard index < bytes.count else { break }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
        // A list of no tags at all can only be a client's mistake: no condition can mean "never" or "always".
        guard !tags.isEmpty else { return nil }
        self = .tags(tags)
    }

    /// If-Match: strong comparison; `.any` is true when a current representation exists (tag != nil).
    public func matchesStrongly(_ current: EntityTag?) -> Bool {
        guard let current else { return false }
        switch self {
        case .any: return true
        case .tags(let tags): return tags.contains { $0.matchesStrongly(current) }
        }
    }

    /// If-None-Match: weak comparison; `.any` is true when a current representation exists.
    public func matchesWeakly(_ current: EntityTag?) -> Bool {
        guard let current else { return false }
        switch self {
        case .any: return true
        case .tags(let tags): return tags.contains { $0.matchesWeakly(current) }
        }
    }

    /// `entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE`, read from `index`, which is left after the closing quote.
    private static func entityTag(in bytes: [UInt8], at index: inout Int) -> EntityTag? {
        var isWeak = false
        // %s"W/": the prefix is case-sensitive, so "w/" is malformed.
        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "W"), bytes[index + 1] == UInt8(ascii: "/") {
            isWeak = true
            index += 2
        }
        guard index < bytes.count, bytes[index] == ASCII.doubleQuote else { return nil }
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != ASCII.doubleQuote {
            guard isEntityTagCharacter(bytes[index]) else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        let opaqueTag = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        return EntityTag(opaqueTag: opaqueTag, isWeak: isWeak)
    }

    /// `etagc = %x21 / %x23-7E / obs-text`: visible characters but `"`, and any byte of a non-ASCII character.
    private static func isEntityTagCharacter(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x7E).contains(byte) || byte >= 0x80
    }
}

extension Request {
    /// Every line of the conditional header `headerName` (If-Match or If-None-Match) joined and parsed;
    /// nil when the header is absent.
    ///
    /// - Parameter percentEncodingAdvice: what the 400 for a percent-encoded value adds after naming the cause.
    /// - Throws: a 400 `Problem` naming the header when its value is neither `*` nor a list of entity tags, and
    ///   saying so when the client percent-encoded it (`PercentEncodedHeader`).
    public func entityTagCondition(_ headerName: String, percentEncodingAdvice: String? = nil) throws -> EntityTagCondition? {
        let lines = headers.values(for: headerName)
        guard !lines.isEmpty else { return nil }
        if lines.contains(where: PercentEncodedHeader.startsWithEncodedQuote) {
            throw PercentEncodedHeader.problem(header: headerName, advice: percentEncodingAdvice)
        }
        // RFC 9110 §5.3: repeated lines of a list field mean the same as one line joined with commas.
        guard let condition = EntityTagCondition(headerValue: lines.joined(separator: ", ")) else {
            throw Problem(
                .badRequest, detail: "The \(headerName) header must be * or a comma-separated list of entity tags such as \"abc\" or W/\"abc\".")
        }
        return condition
    }
}

extension ASCII {
    fileprivate static let doubleQuote = UInt8(ascii: "\"")
}

extension SHA256 {
    fileprivate mutating func updateWithLength(_ count: Int) {
        withUnsafeBytes(of: UInt64(count).bigEndian) { update(bufferPointer: $0) }
    }

    fileprivate mutating func updateWithLengthPrefix(_ bytes: [UInt8]) {
        updateWithLength(bytes.count)
        update(data: bytes)
    }
}
