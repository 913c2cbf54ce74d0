import CLinux
#if canImport(Glibc)
    import Glibc
#endif

/// A TCP socket descriptor with one thin wrapper per system call.
///
/// A `Socket` is a plain value: copying it does not duplicate the descriptor, and whoever owns
/// the connection calls `close()` exactly once. Sockets made here are non-blocking and
/// close-on-exec, except those from `connect(to:)`, which tests use as blocking clients.
public struct Socket: Sendable, Hashable {
    /// The kernel's file descriptor.
    public let descriptor: Int32

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Opens a non-blocking listening socket bound to `address` (port 0 picks a free port).
    public static func listen(on address: SocketAddress, backlog: Int32 = 1024) throws(SocketError) -> Socket {
        let fd = Glibc.socket(address.family, socketType(nonBlocking: true), 0)
        guard fd >= 0 else { throw .lastError("socket") }
        let socket = Socket(descriptor: fd)
        do throws(SocketError) {
            // Lets a restarted server bind while old connections sit in TIME_WAIT.
            try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1, name: "setsockopt(SO_REUSEADDR)")
            let bound = address.withSockAddr { Glibc.bind(fd, $0, $1) }
            guard bound == 0 else { throw SocketError.lastError("bind(\(address))") }
            guard Glibc.listen(fd, backlog) == 0 else { throw SocketError.lastError("listen") }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Opens a blocking connection to `address`; meant for clients in tests.
    public static func connect(to address: SocketAddress) throws(SocketError) -> Socket {
        let fd = Glibc.socket(address.family, socketType(nonBlocking: false), 0)
        guard fd >= 0 else { throw .lastError("socket") }
        let connected = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        guard connected == 0 else {
            let error = SocketError.lastError("connect(\(address))")
            Glibc.close(fd)
            throw error
        }
        return Socket(descriptor: fd)
    }

    /// The address the socket is bound to; its `port` is the one chosen for port 0.
    public func localAddress() throws(SocketError) -> SocketAddress {
        try address(from: getsockname, call: "getsockname")
    }

    /// The address of the connected peer.
    public func peerAddress() throws(SocketError) -> SocketAddress {
        try address(from: getpeername, call: "getpeername")
    }

    /// One address the kernel fills in: `getsockname` or `getpeername`, which take the same arguments.
    private func address(
        from query: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32, call: String
    ) throws(SocketError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { query(descriptor, $0, &length) }
        }
        guard result == 0 else { throw .lastError(call) }
        return SocketAddress(storage: storage, length: length)
    }

    /// Accepts one pending connection as a non-blocking socket, or returns nil when none is waiting.
    public func accept() throws(SocketError) -> Socket? {
        while true {
            let fd = clinux_accept4(descriptor, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 { return Socket(descriptor: fd) }
            let error = SocketError.lastError("accept4")
            if error.errno == EINTR { continue }
            // A client that gave up between SYN and accept is not the listener's failure.
            if error.isWouldBlock || error.errno == ECONNABORTED { return nil }
            throw error
        }
    }

    /// What one `read` produced.
    public enum ReadResult: Sendable, Equatable {
        case bytes(Int)
        case wouldBlock
        case endOfStream
    }

    /// Reads at most `buffer.count` bytes.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> ReadResult {
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .endOfStream }
            let error = SocketError.lastError("read")
            if error.errno == EINTR { continue }
            if error.isWouldBlock { return .wouldBlock }
            throw error
        }
    }

    /// Sends as much of `bytes` as the kernel takes now; nil means the send buffer is full.
    ///
    /// MSG_NOSIGNAL: a peer that has gone away yields EPIPE here instead of a SIGPIPE that
    /// would kill the process.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int? {
        while true {
            let count = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return count }
            let error = SocketError.lastError("send")
            if error.errno == EINTR { continue }
            if error.isWouldBlock { return nil }
            throw error
        }
    }

    /// Turns off Nagle's algorithm so a response written in one call leaves at once.
    public func setNoDelay() throws(SocketError) {
        try setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1, name: "setsockopt(TCP_NODELAY)")
    }

    /// Sets a receive timeout on a blocking socket, so a test client never waits forever.
    public func setReceiveTimeout(milliseconds: Int) throws(SocketError) {
        var time = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        let result = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        guard result == 0 else { throw .lastError("setsockopt(SO_RCVTIMEO)") }
    }

    /// Stops sending (FIN to the peer) while still letting the socket read.
    public func shutdownWrite() throws(SocketError) {
        guard Glibc.shutdown(descriptor, Int32(SHUT_WR)) == 0 else { throw .lastError("shutdown") }
    }

    /// Releases the descriptor. Errors are ignored: Linux frees the descriptor even when close fails.
    public func close() {
        _ = Glibc.close(descriptor)
    }

    private func setOption(_ level: Int32, _ option: Int32, _ value: Int32, name: String) throws(SocketError) {
        var value = value
        guard setsockopt(descriptor, level, option, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw .lastError(name)
        }
    }

    private static func socketType(nonBlocking: Bool) -> Int32 {
        let base = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return nonBlocking ? base | Int32(SOCK_NONBLOCK.rawValue) : base
    }
}
