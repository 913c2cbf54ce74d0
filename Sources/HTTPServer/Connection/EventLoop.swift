// Threading design of the server (this file owns it).
//
// - Each EventLoop is one OS thread blocked in epoll_wait. That thread alone touches the loop's
//   `connections` and every Connection in it: reading, parsing, writing, timeouts, closing.
// - The listening socket sits in every loop's epoll set with EPOLLEXCLUSIVE. The loop that accepts
//   a connection hands it to the loop with the fewest connections (itself when tied), which owns it
//   for its whole life. Without the hand-off, a burst of connects (a load balancer or wrk opening
//   64 at once) all landed on whichever loop woke first, and the other core idled: the bench showed
//   one loop thread carrying every request. No thread per connection, no lock per read.
// - A complete request goes to an unstructured Task whose executor preference is the loop itself
//   (`LoopExecutor`, SE-0417): the handler runs on the loop thread between epoll waits, and so does
//   every continuation that resumes it. A request's database work crosses threads at most twice
//   (loop → pool worker → loop) instead of four times through the cooperative pool, and not at all
//   for a single statement: the loop is also a `Reactor` (Sockets), whose `epoll_wait` watches the
//   descriptors others register, such as the non-blocking PostgreSQL connections `LoopSetup` gives
//   each loop (Postgres/LoopConnections.swift). The price: handler code must never block (it
//   doesn't: blocking libpq calls run on the pool's threads), and one loop's handlers share its
//   thread, so there is one loop per core.
//   The Connection keeps the Task's handle (loop thread only, like the rest of it). When the loop
//   closes a connection whose handler still runs (the peer sent EOF, an error, the drain deadline),
//   it cancels that Task: cancellation is how long-polls end early, and the answer is dropped.
// - Jobs and answers reach the loop through its `inbox` (a Mutex). A post from another thread
//   writes the eventfd only if the inbox was empty; a post from the loop thread itself writes
//   nothing, because the loop drains the inbox until it is empty before it waits again. Each answer
//   leaves with one send(), registering EPOLLOUT only when the socket buffer is full.
// - A job posted after the loop ended runs on the global executor, so no task is ever stranded.
// - Time: epoll_wait never sleeps longer than the sweep interval, and one sweep per interval
//   applies request, idle and drain timeouts to all connections. No timer or Task per request.
// - Shutdown arrives as inbox messages too: stop accepting, then drain until idle or deadline.

import Logging
import Sockets
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One epoll thread and the connections it owns.
///
/// `@unchecked Sendable` invariant: after `start()`, every stored `var` and every Connection is
/// used only on the loop thread; other threads reach the loop only through `post(_:)`, which
/// touches nothing but the Mutex-guarded `inbox`, the eventfd, and the `Atomic` `isStopping`.
final class EventLoop: @unchecked Sendable {
    enum Message {
        case response(descriptor: Int32, serial: UInt64, bytes: [UInt8], closeAfter: Bool)
        /// A piece of a task that prefers this loop's executor.
        case job(UnownedJob)
        case stopAccepting(CheckedContinuation<Void, Never>)
        case drain(deadline: ContinuousClock.Instant, CheckedContinuation<Void, Never>)
        /// A connection another loop of the group accepted for this one to own.
        case adopt(Socket)
    }

    struct Inbox {
        var messages: [Message] = []
        /// Set when the loop has exited; later messages are dropped and the eventfd is gone.
        var isClosed = false
    }

    let epoll: Epoll
    let limits: Limits
    let logger: Logger
    let parser: RequestParser
    let decoder: ChunkedDecoder
    /// The loop's one read buffer; every connection reads into it and keeps only what it needs.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    let notifier: EventNotifier
    let listener: Socket
    private let responder: Responder
    let inbox = Mutex(Inbox())
    /// Set once by the loop thread as it starts; read by `post` to skip waking itself.
    let loopThread = Mutex<pthread_t?>(nil)
    /// Runs handler tasks on this loop's thread (see the design note above); created and used on that thread only.
    private(set) lazy var executor = LoopExecutor(loop: self)
    /// The server's loops: the connection limit they share, and which of them owns a new connection.
    let group: LoopGroup
    /// Connections this loop owns or has been handed and not yet closed; read by other loops' acceptors.
    let load = Atomic<Int>(0)
    private let isStopping = Atomic<Bool>(false)
    // Loop thread only, like every var below.
    var connections: [Int32: Connection] = [:]
    /// Descriptors others watch through this loop as a `Reactor` (a database driver's sockets).
    var watchers: [Int32: (Epoll.Events) -> Void] = [:]
    /// What `Reactor.everySecond` asked for, run on each sweep (at most a second apart).
    var periodicChecks: [(ContinuousClock.Instant) -> Void] = []
    /// What `LoopSetup` asked to run as the loop ends.
    var teardown: (() -> Void)?
    var nextSerial: UInt64 = 0
    var isListening = true
    var drainRequest: (deadline: ContinuousClock.Instant, done: CheckedContinuation<Void, Never>)?
    let sweepInterval: Duration

    let setup: LoopSetup?

    init(
        listener: Socket, responder: Responder, limits: Limits, group: LoopGroup, setup: LoopSetup?, logger: Logger
    ) throws(SocketError) {
        self.setup = setup
        self.listener = listener
        self.group = group
        self.responder = responder
        self.limits = limits
        self.logger = logger
        parser = RequestParser(limits: limits)
        decoder = ChunkedDecoder(limits: limits)
        epoll = try Epoll()
        notifier = try EventNotifier()
        let quarter = min(limits.requestTimeout, limits.idleTimeout) / 4
        sweepInterval = max(.milliseconds(10), min(.seconds(1), quarter))
        try epoll.add(notifier.descriptor, for: .readable)
        try epoll.add(listener.descriptor, for: [.readable, .exclusive])
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Starts the loop's thread; it runs until a drain finishes.
    func start() {
        DetachedThread.start { self.run() }
    }

    /// Hands a message to the loop from any thread.
    func post(_ message: Message) {
        let fromLoop = isLoopThread
        let isPosted = inbox.withLock { inbox in
            guard !inbox.isClosed else { return false }
            let wasEmpty = inbox.messages.isEmpty
            inbox.messages.append(message)
            // Inside the lock, so the loop cannot close the eventfd between the check and the write.
            if wasEmpty && !fromLoop { try? notifier.notify() }
            return true
        }
        // The loop has exited: whoever waits for it to stop must not wait forever.
        if !isPosted { release(message) }
    }

    /// Releases whoever depends on a message the loop will never act on: a waiting task is resumed, a
    /// job runs on the global executor instead, a handed-over connection is closed.
    func release(_ message: Message) {
        switch message {
        case .stopAccepting(let done), .drain(_, let done): done.resume()
        case .job(let job): globalConcurrentExecutor.enqueue(job)
        case .adopt(let socket): forget(socket)
        case .response: break
        }
    }

    /// Closes a socket that never became a Connection of this loop, and stops counting it.
    func forget(_ socket: Socket) {
        load.subtract(1, ordering: .relaxed)
        group.remove()
        socket.close()
    }

    /// Takes the listener out of this loop's epoll set; returns once the loop has done so.
    func stopAccepting() async {
        await withCheckedContinuation { post(.stopAccepting($0)) }
    }

    /// Closes idle connections now, lets busy ones finish until `deadline`, then ends the thread.
    func drain(until deadline: ContinuousClock.Instant) async {
        isStopping.store(true, ordering: .relaxed)
        await withCheckedContinuation { post(.drain(deadline: deadline, $0)) }
    }

    /// Whether the calling thread is this loop's own.
    var isLoopThread: Bool {
        guard let thread = loopThread.withLock({ $0 }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Runs the request's handler in a Task on this loop and posts the serialized answer back to it.
    ///
    /// The Task is returned for the connection to keep, so closing the connection can cancel it.
    func dispatch(_ request: Request, isHTTP10: Bool, for connection: Connection) -> Task<Void, Never> {
        let (descriptor, serial, responder) = (connection.socket.descriptor, connection.serial, responder)
        return Task(executorPreference: executor) { [self] in
            let response = await responder.respond(to: request)
            // Cancelled only when the connection is closed: nobody can receive the answer.
            guard !Task.isCancelled else { return }
            let keepAlive = request.isKeepAlive && !isStopping.load(ordering: .relaxed)
            let bytes = ResponseSerializer.serialize(
                response, requestID: request.id, isHead: request.method == .head, keepAlive: keepAlive, isHTTP10: isHTTP10
            )
            post(.response(descriptor: descriptor, serial: serial, bytes: bytes, closeAfter: !keepAlive))
        }
    }

    func close(_ connection: Connection) {
        guard connections[connection.socket.descriptor] === connection else { return }
        connections[connection.socket.descriptor] = nil
        connection.cancelHandler()
        forget(connection.socket)
    }
}

/// The loops of one server: the number of connections open across them, and which loop takes a new one.
final class LoopGroup: Sendable {
    private let count = Atomic<Int>(0)
    /// Set once before the loops start; emptied at shutdown, which breaks the loop ↔ group reference cycle.
    private let loops = Mutex<[EventLoop]>([])

    func join(_ members: [EventLoop]) {
        loops.withLock { $0 = members }
    }

    func dissolve() {
        loops.withLock { $0 = [] }
    }

    /// The loop with the fewest connections, `acceptor` when it is among the fewest; counts one more on it.
    func assignConnection(acceptedBy acceptor: EventLoop) -> EventLoop {
        let owner = loops.withLock { loops in
            var owner = acceptor
            var fewest = acceptor.load.load(ordering: .relaxed)
            for loop in loops where loop !== acceptor {
                let load = loop.load.load(ordering: .relaxed)
                if load < fewest { (owner, fewest) = (loop, load) }
            }
            return owner
        }
        owner.load.add(1, ordering: .relaxed)
        return owner
    }

    /// Counts a new connection unless `limit` are open already; false means refuse it.
    func admit(limit: Int) -> Bool {
        guard count.add(1, ordering: .relaxed).newValue > limit else { return true }
        count.subtract(1, ordering: .relaxed)
        return false
    }

    /// Counts a connection closed.
    func remove() {
        count.subtract(1, ordering: .relaxed)
    }

    var current: Int { count.load(ordering: .relaxed) }
}

/// Called on each event loop's thread before it waits for the first time, with the loop as a `Reactor`
/// that other code (a database driver) may watch its own descriptors through; returns what to call on
/// that thread as the loop ends.
public typealias LoopSetup = @Sendable (any Reactor) -> () -> Void

extension EventLoop: Reactor {
    func watch(_ descriptor: Int32, for events: Epoll.Events, handler: @escaping (Epoll.Events) -> Void) throws(SocketError) {
        if watchers.updateValue(handler, forKey: descriptor) == nil {
            do {
                try epoll.add(descriptor, for: events)
            } catch {
                // A descriptor closed and reused by its owner is still known here but no longer to epoll.
                guard error.errno == EEXIST else { watchers[descriptor] = nil; throw error }
                try epoll.modify(descriptor, for: events)
            }
        } else {
            try rewatch(descriptor, for: events)
        }
    }

    func rewatch(_ descriptor: Int32, for events: Epoll.Events) throws(SocketError) {
        do {
            try epoll.modify(descriptor, for: events)
        } catch where error.errno == ENOENT {
            // Closed and reopened under the same number: epoll forgot it when it was closed.
            try epoll.add(descriptor, for: events)
        }
    }

    func unwatch(_ descriptor: Int32) {
        guard watchers.removeValue(forKey: descriptor) != nil else { return }
        try? epoll.remove(descriptor)
    }

    func everySecond(_ check: @escaping (ContinuousClock.Instant) -> Void) {
        periodicChecks.append(check)
    }
}

/// The task executor of one event loop: jobs go to the loop's inbox and run on its thread (SE-0417).
final class LoopExecutor: TaskExecutor {
    unowned let loop: EventLoop

    init(loop: EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        loop.post(.job(UnownedJob(job)))
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
