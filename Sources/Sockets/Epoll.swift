import CLinux

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

        public static let readable = Events(rawValue: EPOLLIN.rawValue)
        public static let writable = Events(rawValue: EPOLLOUT.rawValue)
        /// Reported whenever the peer hung up or the descriptor failed; never needs asking for.
        public static let hangUp = Events(rawValue: EPOLLHUP.rawValue | EPOLLERR.rawValue)
        /// Wakes only one of the loops sharing a listening socket (Linux 4.5+).
        public static let exclusive = Events(rawValue: EPOLLEXCLUSIVE.rawValue)
    }

    /// One readiness report: which descriptor and what it is ready for.
    public struct Event: Sendable {
        public let descriptor: Int32
        public let events: Events
    }

    public let descriptor: Int32

    public init() throws(SocketError) {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw .lastError("epoll_create1") }
        descriptor = fd
    }

    public func add(_ fd: Int32, for events: Events) throws(SocketError) {
        try control(EPOLL_CTL_ADD, fd, events, name: "epoll_ctl(ADD)")
    }

    public func modify(_ fd: Int32, for events: Events) throws(SocketError) {
        try control(EPOLL_CTL_MOD, fd, events, name: "epoll_ctl(MOD)")
    }

    public func remove(_ fd: Int32) throws(SocketError) {
        try control(EPOLL_CTL_DEL, fd, [], name: "epoll_ctl(DEL)")
    }

    /// Waits up to `timeoutMilliseconds` (-1 forever) and fills `list` with ready descriptors.
    ///
    /// An interrupted wait (EINTR) reports nothing rather than failing.
    public func wait(into list: ReadyList, timeoutMilliseconds: Int32) throws(SocketError) {
        let count = epoll_wait(descriptor, list.storage.baseAddress, Int32(list.capacity), timeoutMilliseconds)
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
        var event = epoll_event()
        event.events = events.rawValue
        event.data.fd = fd
        guard epoll_ctl(descriptor, operation, fd, &event) == 0 else { throw .lastError(name) }
    }
}

extension Epoll {
    /// The buffer `wait` fills; owned by one loop thread and reused for every wait.
    public final class ReadyList {
        fileprivate let storage: UnsafeMutableBufferPointer<epoll_event>
        public let capacity: Int
        /// How many entries the last `wait` filled.
        public fileprivate(set) var count = 0

        public init(capacity: Int = 256) {
            self.capacity = capacity
            storage = .allocate(capacity: capacity)
        }

        deinit { storage.deallocate() }

        public subscript(index: Int) -> Event {
            precondition(index < count, "ready list index out of range")
            let event = storage[index]
            return Event(descriptor: event.data.fd, events: Events(rawValue: event.events))
        }
    }
}
