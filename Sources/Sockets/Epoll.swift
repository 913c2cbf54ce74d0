#if canImport(Glibc)
import Glibc
#endif

/// An epoll instance: the readiness set one event loop thread waits on.
///
/// Interest is level-triggered, so a loop that reads less than is available is woken again
/// rather than losing the event. The registration token is the descriptor itself.
public struct Epoll: Sendable {
    /// The readiness a descriptor is watched for or was reported with.
    public struct Events: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let readable = Events(rawValue: LinuxCalls.epollIn)
        public static let writable = Events(rawValue: LinuxCalls.epollOut)
        /// Reported whenever the peer hung up or the descriptor failed; never needs asking for.
        public static let hangUp = Events(rawValue: LinuxCalls.epollHup | LinuxCalls.epollErr)
        /// Wakes only one of the loops sharing a listening socket (Linux 4.5+).
        public static let exclusive = Events(rawValue: LinuxCalls.epollExclusive)
    }

    /// One readiness report: which descriptor and what it is ready for.
    public struct Event: Sendable {
        public let descriptor: Int32
        public let events: Events
    }

    public let descriptor: Int32

    public init() throws(SocketError) {
        let fd = LinuxCalls.epollCreate1(LinuxCalls.closeOnExec)
        guard fd >= 0 else { throw .lastError("epoll_create1") }
        descriptor = fd
    }

    public func add(_ fd: Int32, for events: Events) throws(SocketError) {
        try control(LinuxCalls.controlAdd, fd, events, name: "epoll_ctl(ADD)")
    }

    public func modify(_ fd: Int32, for events: Events) throws(SocketError) {
        try control(LinuxCalls.controlModify, fd, events, name: "epoll_ctl(MOD)")
    }

    public func remove(_ fd: Int32) throws(SocketError) {
        try control(LinuxCalls.controlDelete, fd, [], name: "epoll_ctl(DEL)")
    }

    /// Waits up to `timeoutMilliseconds` (-1 forever) and fills `list` with ready descriptors.
    ///
    /// An interrupted wait (EINTR) reports nothing rather than failing.
    public func wait(into list: ReadyList, timeoutMilliseconds: Int32) throws(SocketError) {
        let count = LinuxCalls.epollWait(descriptor, list.storage.baseAddress, Int32(list.capacity), timeoutMilliseconds)
        if count >= 0 {
            list.count = Int(count)
            return
        }
        let error = SocketError.lastError("epoll_wait")
        list.count = 0
        if error.errno != EINTR { throw error }
    }

    public func close() {
        _ = Glibc.close(descriptor)
    }

    private func control(_ operation: Int32, _ fd: Int32, _ events: Events, name: String) throws(SocketError) {
        var raw = [UInt8](repeating: 0, count: LinuxCalls.eventSize)
        let result = raw.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: events.rawValue, toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: UInt64(UInt32(bitPattern: fd)), toByteOffset: LinuxCalls.eventDataOffset, as: UInt64.self)
            return LinuxCalls.epollControl(descriptor, operation, fd, bytes.baseAddress)
        }
        guard result == 0 else { throw .lastError(name) }
    }
}

extension Epoll {
    /// The buffer `wait` fills; owned by one loop thread and reused for every wait.
    public final class ReadyList {
        fileprivate let storage: UnsafeMutableRawBufferPointer
        public let capacity: Int
        /// How many entries the last `wait` filled.
        public fileprivate(set) var count = 0

        public init(capacity: Int = 256) {
            self.capacity = capacity
            storage = .allocate(byteCount: capacity * LinuxCalls.eventSize, alignment: 8)
        }

        deinit { storage.deallocate() }

        public subscript(index: Int) -> Event {
            precondition(index < count, "ready list index out of range")
            let base = index * LinuxCalls.eventSize
            let mask = storage.loadUnaligned(fromByteOffset: base, as: UInt32.self)
            let data = storage.loadUnaligned(fromByteOffset: base + LinuxCalls.eventDataOffset, as: UInt64.self)
            return Event(descriptor: Int32(truncatingIfNeeded: data), events: Events(rawValue: mask))
        }
    }
}
