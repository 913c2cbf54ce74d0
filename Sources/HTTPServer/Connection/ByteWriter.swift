#if canImport(Glibc)
    import Glibc
#endif

/// Writes a message into an Array's uninitialized storage through a pointer, for a message whose size is
/// bounded beforehand (`ResponseSerializer`): `Array.append` checks capacity and uniqueness for every piece.
///
/// Every write checks that it fits and stops the process if it does not, so an underestimated bound is a
/// crash, never a write past the buffer.
struct ByteWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private let end: UnsafeMutablePointer<UInt8>
    private var position: UnsafeMutablePointer<UInt8>

    /// The bytes `body` writes, at most `capacity` of them.
    static func bytes(capacity: Int, _ body: (inout ByteWriter) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: max(capacity, 1)) { buffer, count in
            let start = buffer.baseAddress!
            var writer = ByteWriter(start: start, end: start + min(capacity, buffer.count), position: start)
            body(&writer)
            count = writer.position - start
        }
    }

    /// How many bytes are written so far: a place to `rewind(to:)`.
    var mark: Int { position - start }

    /// Forgets what was written after `mark`.
    mutating func rewind(to mark: Int) {
        precondition(mark >= 0 && mark <= self.mark, "ByteWriter: rewinding forward")
        position = start + mark
    }

    /// Whether the bytes written after `mark` hold a CR or LF.
    func containsLineBreak(since mark: Int) -> Bool {
        let from = start + mark
        let count = position - from
        return memchr(from, Int32(UInt8(ascii: "\r")), count) != nil || memchr(from, Int32(UInt8(ascii: "\n")), count) != nil
    }

    /// A literal's bytes.
    mutating func write(_ literal: StaticString) {
        write(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// A string's UTF-8.
    mutating func write(text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(bytes.count <= end - position, "ByteWriter: the message outgrew its bound")
        UnsafeMutableRawPointer(position).copyMemory(from: base, byteCount: bytes.count)
        position += bytes.count
    }

    private mutating func write(byte: UInt8) {
        precondition(position < end, "ByteWriter: the message outgrew its bound")
        position.pointee = byte
        position += 1
    }

    /// A non-negative integer in decimal, without making a String of it.
    mutating func write(decimal value: Int) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            write(byte: UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// A positive integer in hexadecimal, lowercase, without leading zeros.
    mutating func write(hexadecimal value: Int) {
        var shift = (Int.bitWidth - value.leadingZeroBitCount - 1) / 4 * 4
        while shift >= 0 {
            let digit = UInt8((value >> shift) & 0xF)
            write(byte: digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
            shift -= 4
        }
    }
}
