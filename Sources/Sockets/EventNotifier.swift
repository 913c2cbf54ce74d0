import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// An eventfd that lets any thread wake a loop blocked in `Epoll.wait`.
///
/// Several `notify()` calls before one `drain()` collapse into a single wake-up.
public struct EventNotifier: Sendable {
    public let descriptor: Int32

    public init() throws(SocketError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .lastError("eventfd") }
        descriptor = fd
    }

    /// Makes the descriptor readable. Safe from any thread.
    public func notify() throws(SocketError) {
        var one: UInt64 = 1
        // EAGAIN means the counter is saturated, which still leaves the descriptor readable.
        guard Glibc.write(descriptor, &one, 8) == 8 || errno == EAGAIN else { throw .lastError("write(eventfd)") }
    }

    /// Resets the counter so the descriptor stops being readable.
    public func drain() throws(SocketError) {
        var count: UInt64 = 0
        guard Glibc.read(descriptor, &count, 8) == 8 || errno == EAGAIN else { throw .lastError("read(eventfd)") }
    }

    public func close() {
        _ = Glibc.close(descriptor)
    }
}
