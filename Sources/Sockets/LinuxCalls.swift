#if canImport(Glibc)
import Glibc
#endif

/// The Linux-only entry points of the C library (epoll, eventfd, accept4), looked up once by name.
///
/// Swift's Glibc module map leaves out `<sys/epoll.h>` and `<sys/eventfd.h>` and hides the
/// `_GNU_SOURCE` `accept4`, and the package gives Sockets no C target to include them, so the
/// functions are found with `dlsym` and the
/// constants below are the kernel's ABI values (uapi `linux/eventpoll.h`, `asm-generic/fcntl.h`).
enum LinuxCalls {
    typealias CreateFunction = @convention(c) (Int32) -> Int32
    typealias ControlFunction = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias WaitFunction = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    typealias EventFDFunction = @convention(c) (UInt32, Int32) -> Int32
    typealias AcceptFunction = @convention(c) (Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32) -> Int32

    static let epollCreate1: CreateFunction = resolve("epoll_create1")
    static let epollControl: ControlFunction = resolve("epoll_ctl")
    static let epollWait: WaitFunction = resolve("epoll_wait")
    static let eventFD: EventFDFunction = resolve("eventfd")
    static let accept4: AcceptFunction = resolve("accept4")

    static let epollIn: UInt32 = 0x001
    static let epollOut: UInt32 = 0x004
    static let epollErr: UInt32 = 0x008
    static let epollHup: UInt32 = 0x010
    static let epollExclusive: UInt32 = 1 << 28
    static let controlAdd: Int32 = 1
    static let controlDelete: Int32 = 2
    static let controlModify: Int32 = 3
    /// EPOLL_CLOEXEC and EFD_CLOEXEC both equal O_CLOEXEC.
    static let closeOnExec: Int32 = 0o2_000_000
    /// EFD_NONBLOCK equals O_NONBLOCK.
    static let nonBlocking: Int32 = 0o4000

    #if arch(x86_64)
    /// `struct epoll_event` is packed on x86-64: a 32-bit mask then the 64-bit data, 12 bytes.
    static let eventSize = 12
    static let eventDataOffset = 4
    #else
    static let eventSize = 16
    static let eventDataOffset = 8
    #endif

    private static func resolve<F>(_ name: String) -> F {
        // RTLD_DEFAULT is the null handle in glibc: search the libraries already loaded.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("the C library has no \(name); Sockets needs Linux")
        }
        return unsafeBitCast(symbol, to: F.self)
    }
}
