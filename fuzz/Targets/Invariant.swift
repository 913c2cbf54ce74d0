/// Stops the run with `message` when `condition` is false, so libFuzzer reports the input as a crash.
///
/// `precondition` loses its message under `-O`; `fatalError` keeps it, and the crash log then says which
/// invariant broke and for what values.
func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError("invariant: " + message(), file: file, line: line) }
}

/// Runs `body` over a fresh allocation holding exactly `bytes`, so AddressSanitizer catches a read past its end.
///
/// A slice of the fuzzer's buffer would not do: reading past the slice still lands inside the buffer.
func withExactCopy<Result>(of bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
    defer { copy.deallocate() }
    if !bytes.isEmpty { copy.copyMemory(from: bytes) }
    return body(UnsafeRawBufferPointer(copy))
}

/// The bytes as text for a message, with CR and LF visible.
func show(_ bytes: UnsafeRawBufferPointer) -> String {
    String(decoding: bytes, as: UTF8.self).debugDescription
}
