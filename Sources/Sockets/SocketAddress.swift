#if canImport(Glibc)
    import Glibc
#endif

/// A numeric IPv4 or IPv6 address with a port, as the kernel wants it.
public struct SocketAddress: Sendable, CustomStringConvertible {
    private let storage: sockaddr_storage
    /// The length of the meaningful prefix of `storage`.
    let length: socklen_t

    /// Parses a numeric host (`"127.0.0.1"`, `"::1"`, `"0.0.0.0"`) or `"localhost"`.
    public init(host: String, port: Int) throws(SocketError) {
        let host = host == "localhost" ? "127.0.0.1" : host
        guard (0...Int(UInt16.max)).contains(port) else {
            throw SocketError(call: "SocketAddress(port:)", errno: EINVAL)
        }
        var storage = sockaddr_storage()
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            Self.copy(v4, into: &storage)
            self.init(storage: storage, length: socklen_t(MemoryLayout<sockaddr_in>.size))
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            Self.copy(v6, into: &storage)
            self.init(storage: storage, length: socklen_t(MemoryLayout<sockaddr_in6>.size))
        } else {
            throw SocketError(call: "inet_pton(\(host))", errno: EINVAL)
        }
    }

    private static func copy<T>(_ address: T, into storage: inout sockaddr_storage) {
        withUnsafeBytes(of: address) { source in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
        }
    }

    /// Wraps an address the kernel filled in (getsockname, accept).
    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The address family, `AF_INET` or `AF_INET6`.
    public var family: Int32 { Int32(storage.ss_family) }

    /// The port in host byte order.
    public var port: Int {
        withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset, right after the family.
            let port = raw.load(fromByteOffset: MemoryLayout<sa_family_t>.size, as: in_port_t.self)
            return Int(UInt16(bigEndian: port))
        }
    }

    public var description: String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The numeric host without the port or brackets, e.g. `"192.0.2.7"` or `"2001:db8::1"`.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafeBytes(of: storage) { raw in
            let offset =
                family == AF_INET
                ? MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
                : MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
            _ = inet_ntop(family, raw.baseAddress! + offset, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `body` with the address as the `sockaddr` pointer the socket calls take.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
