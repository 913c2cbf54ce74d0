/// Header fields in the order received or added; names compare case-insensitively (RFC 9110 §5.1).
///
/// Repeated names stay separate entries, so a second `Content-Length` is never silently folded
/// into the first.
public struct Headers: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value for `name`, or nil.
    public subscript(name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.equalsIgnoringASCIICase(name) }
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Adds `value` to the comma-separated list `name` holds, in its first field line, or adds the field: one
    /// line means the same as several (RFC 9110 §5.3), and clients that read only the first see every value.
    public mutating func addToList(_ name: String, _ value: String) {
        guard let index = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) else { return add(name, value) }
        fields[index].value += ", " + value
    }

    /// Replaces every value of `name` with one, keeping the position of the first.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) {
            fields[index].value = value
            var seen = false
            fields.removeAll { field in
                guard field.name.equalsIgnoringASCIICase(name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            add(name, value)
        }
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}

extension String {
    /// ASCII case-insensitive equality without allocating lower-cased copies.
    /// Compared in both strings' contiguous UTF-8 when they have it (native strings do): header lookups ask
    /// this for every field, and a zip of two UTF-8 views steps through each view's index logic per byte.
    package func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let contiguous = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in
                for index in mine.indices where mine[index].asciiLowercased != theirs[index].asciiLowercased { return false }
                return true
            }
        }
        if let contiguous, let equal = contiguous { return equal }
        return zip(utf8, other.utf8).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
    }
}

extension UInt8 {
    package var asciiLowercased: UInt8 { (0x41...0x5A).contains(self) ? self | 0x20 : self }
}
