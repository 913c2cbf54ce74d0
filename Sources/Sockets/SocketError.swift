#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call, named by the call and the `errno` it left behind.
///
/// Every wrapper in this module turns a failure into this error at the call site, so a caller
/// never reads `errno` itself and never sees a stale one.
public struct SocketError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The system call that failed, e.g. `"bind"`.
    public let call: String
    /// The `errno` value the call set.
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// Captures the current thread's `errno` for a call that just failed.
    static func lastError(_ call: String) -> SocketError {
        SocketError(call: call, errno: Glibc.errno)
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// True when the call would have blocked on a non-blocking descriptor.
    public var isWouldBlock: Bool {
        errno == EAGAIN || errno == EWOULDBLOCK
    }
}
