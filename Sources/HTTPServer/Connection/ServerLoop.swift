// Threading design of the server (this file owns it; the event loop underneath, its inbox, executor and
// time-keeping, is described at the top of Sockets/EventLoop.swift).
//
// - Each ServerLoop owns one Sockets `EventLoop` and the connections on it. That loop's thread alone
//   touches the loop's `connections` and every Connection in it: reading, parsing, writing, timeouts,
//   closing. No thread per connection, no lock per read.
// - The listening socket sits in every loop's epoll set with EPOLLEXCLUSIVE. The loop that accepts
//   a connection hands it to the loop with the fewest connections (itself when tied), which owns it
//   for its whole life. Without the hand-off, a burst of connects (a load balancer or wrk opening
//   64 at once) all landed on whichever loop woke first, and the other core idled: the bench showed
//   one loop thread carrying every request.
// - A complete request goes to an unstructured Task whose executor preference is the event loop
//   (SE-0417): the handler runs on the loop thread between epoll waits. A request's database work crosses
//   threads at most twice (loop → pool worker → loop) instead of four times through the cooperative pool,
//   and not at all for a single statement: the loop is also a `Reactor`, and the handler the application
//   makes for each loop (`LoopSetup`) may hold non-blocking PostgreSQL connections that wait in its
//   epoll_wait (Postgres/LoopConnections.swift).
//   Handler code must never block (blocking libpq calls run on the pool's threads).
//   The Connection keeps the Task's handle (loop thread only, like the rest of it). When the loop
//   closes a connection whose handler still runs (the peer sent EOF, an error, the drain deadline),
//   it cancels that Task: cancellation is how long-polls end early, and the answer is dropped.
// - A request's task hands its answer to the connection itself, being on the loop's thread already;
//   handed-over connections and shutdown steps reach the loop as posted work. Each answer leaves with
//   one send(), registering EPOLLOUT only when the socket buffer is full.
// - Time: one sweep per interval applies request, idle and drain timeouts to all connections. No timer
//   or Task per request.
// - Shutdown: stop accepting, then drain until idle or deadline; then the event loop ends.

import Logging
import Sockets
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One event loop of the server: its share of the listener and the connections it owns.
///
/// `@unchecked Sendable` invariant: after `start()`, every stored `var` and every Connection is used only
/// on the event loop's thread; other threads reach it only by posting work to `eventLoop`, and read
/// nothing but the `Atomic`s `load` and `isStopping`.
final class ServerLoop: @unchecked Sendable {
    let eventLoop: EventLoop
    let limits: Limits
    let logger: Logger
    let parser: RequestParser
    let decoder: ChunkedDecoder
    /// The loop's one read buffer; every connection reads into it and keeps only what it needs.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    let listener: Socket
    /// The handler `setup` made for this loop as it started; event loop thread only.
    private var responder: Responder?
    /// The server's loops: the connection limit they share, and which of them owns a new connection.
    let group: LoopGroup
    /// Connections this loop owns or has been handed and not yet closed; read by other loops' acceptors.
    let load = Atomic<Int>(0)
    private let isStopping = Atomic<Bool>(false)
    private let setup: LoopSetup
    // Event loop thread only, like every var below.
    var connections: [Int32: Connection] = [:]
    /// What `setup` asked to run as the loop ends.
    private var teardown: (() -> Void)?
    var nextSerial: UInt64 = 0
    private var isListening = true
    private var drainRequest: (deadline: ContinuousClock.Instant, done: CheckedContinuation<Void, Never>)?
    /// Whether a drain has begun: connections get no new requests, and answers close them.
    var isDraining: Bool { drainRequest != nil }

    init(listener: Socket, limits: Limits, group: LoopGroup, setup: @escaping LoopSetup, logger: Logger) throws(SocketError) {
        self.setup = setup
        self.listener = listener
        self.group = group
        self.limits = limits
        self.logger = logger
        parser = RequestParser(limits: limits)
        decoder = ChunkedDecoder(limits: limits)
        let quarter = min(limits.requestTimeout, limits.idleTimeout) / 4
        eventLoop = try EventLoop(sweepInterval: max(.milliseconds(10), min(.seconds(1), quarter)))
        // Before the loop's thread starts, so that a failure reaches `Server.start`.
        try eventLoop.watch(listener.descriptor, for: [.readable, .exclusive]) { [unowned self] _ in
            acceptConnections(now: eventLoop.now)
        }
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Starts the event loop's thread; it runs until a drain finishes.
    func start() {
        eventLoop.start(self)
    }

    /// Takes the listener out of this loop's epoll set; returns once the loop has done so.
    func stopAccepting() async {
        await withCheckedContinuation { done in
            eventLoop.post(
                { [self] in
                    if isListening {
                        isListening = false
                        eventLoop.unwatch(listener.descriptor)
                    }
                    done.resume()
                }, ifEnded: { done.resume() })
        }
    }

    /// Marks the loop as stopping: answers from now on close their connections (any thread may call it).
    func beginStopping() {
        isStopping.store(true, ordering: .relaxed)
    }

    /// Closes idle connections now, lets busy ones finish until `deadline`, then ends the thread.
    func drain(until deadline: ContinuousClock.Instant) async {
        beginStopping()
        await withCheckedContinuation { done in
            eventLoop.post(
                { [self] in
                    drainRequest = (deadline, done)
                    for connection in Array(connections.values) where connection.isIdle {
                        close(connection)
                    }
                }, ifEnded: { done.resume() })
        }
    }

    /// Runs the request's handler in a Task on this loop and posts the serialized answer back to it.
    ///
    /// The Task is returned for the connection to keep, so closing the connection can cancel it.
    func dispatch(_ request: Request, isHTTP10: Bool, for connection: Connection) -> Task<Void, Never> {
        let (descriptor, serial, responder) = (connection.socket.descriptor, connection.serial, responder!)
        return Task(executorPreference: eventLoop) { [self] in
            let response = await responder.respond(to: request)
            // Cancelled only when the connection is closed: nobody can receive the answer.
            guard !Task.isCancelled else {
                response.stream?.close()
                return
            }
            let keepAlive = request.isKeepAlive && !isStopping.load(ordering: .relaxed)
            if let stream = response.stream {
                return await send(response, streaming: stream, for: request, keepAlive: keepAlive, isHTTP10: isHTTP10, to: descriptor, serial: serial)
            }
            let bytes = ResponseSerializer.serialize(
                response, requestID: request.id, isHead: request.method == .head, keepAlive: keepAlive, isHTTP10: isHTTP10
            )
            // The task runs on this loop's thread (the loop is its executor), so it hands the answer over directly,
            // as `send` does, rather than posting it for the next turn of the loop. Posting remains for a task
            // that ran elsewhere: one whose loop had ended, whose jobs go to the global executor.
            guard eventLoop.isLoopThread else {
                return eventLoop.post { [self] in deliver(bytes, keepAlive: keepAlive, to: descriptor, serial: serial) }
            }
            deliver(bytes, keepAlive: keepAlive, to: descriptor, serial: serial)
        }
    }

    /// Gives a serialized answer to its connection, if that connection is still the one that asked. Loop thread only.
    private func deliver(_ bytes: [UInt8], keepAlive: Bool, to descriptor: Int32, serial: UInt64) {
        guard let connection = connections[descriptor], connection.serial == serial else { return }
        connection.deliver(bytes, closeAfter: !keepAlive || isDraining, now: eventLoop.now)
    }

    /// Sends an answer whose body `stream` produces, piece by piece as the client takes them (see `BodyStream`).
    ///
    /// Runs in the request's task, on this loop's thread: the task's executor is the loop, so the connection
    /// is touched here directly, and looked at again after every wait in case it closed meanwhile.
    private func send(
        _ response: Response, streaming stream: any BodyStream, for request: Request, keepAlive: Bool, isHTTP10: Bool,
        to descriptor: Int32, serial: UInt64
    ) async {
        defer { stream.close() }
        let sendsBody = request.method != .head && !response.status.forbidsContent
        // HTTP/1.0 knows no chunks: the body ends where the connection does (RFC 9112 §6.3).
        let keepAlive = keepAlive && !(isHTTP10 && sendsBody)
        guard let connection = connections[descriptor], connection.serial == serial else { return }
        let head = ResponseSerializer.serializeStreamHead(
            response, requestID: request.id, isHead: !sendsBody, keepAlive: keepAlive, isHTTP10: isHTTP10)
        guard sendsBody else {
            return connection.deliver(head, closeAfter: !keepAlive || isDraining, now: eventLoop.now)
        }
        connection.startStream(head)
        var sent = response.body.count
        do {
            while true {
                try await connection.waitForRoom()
                guard let part = try await stream.next() else { break }
                guard !connection.isClosed else { throw CancellationError() }
                var framed: [UInt8] = []
                framed.reserveCapacity(part.count + 12)
                ResponseSerializer.appendBodyPart(part, isChunked: !isHTTP10, to: &framed)
                connection.sendStreamPart(framed)
                sent += part.count
            }
        } catch {
            // No last chunk: the client sees an incomplete body, not a complete but short one (RFC 9112 §7.1, §8).
            if !(error is CancellationError) {
                logger.error(
                    "streamed answer to \(request.method) \(request.target) failed after \(sent) bytes of its body: \(String(reflecting: error))",
                    metadata: ["request-id": "\(request.id)"])
            }
            return close(connection)
        }
        guard !connection.isClosed else { return }
        connection.deliver(isHTTP10 ? [] : ResponseSerializer.lastChunk, closeAfter: !keepAlive || isDraining, now: eventLoop.now)
    }

    /// Closes a socket that never became a Connection of this loop, and stops counting it.
    func forget(_ socket: Socket) {
        load.subtract(1, ordering: .relaxed)
        group.remove()
        socket.close()
    }

    func close(_ connection: Connection) {
        guard connections[connection.socket.descriptor] === connection else { return }
        connections[connection.socket.descriptor] = nil
        eventLoop.unwatchBeforeClose(connection.socket.descriptor)
        connection.closed()
        forget(connection.socket)
    }
}

extension ServerLoop: EventLoopOwner {
    func loopDidStart(_ loop: EventLoop) {
        // Registered before `setup` runs, so connections are swept before the Reactor's own checks.
        loop.everySecond { [unowned self] now in
            for connection in Array(connections.values) {
                connection.sweep(now: now, isStopping: isDraining)
            }
        }
        let served = setup(loop)
        responder = Responder(handler: served.handler, logger: logger)
        teardown = served.teardown
    }

    var wakeDeadline: ContinuousClock.Instant? { drainRequest?.deadline }

    func isFinished(now: ContinuousClock.Instant) -> Bool {
        // Connections that have had their last answer only linger for the peer's FIN; not worth waiting for.
        guard let drainRequest else { return false }
        return now >= drainRequest.deadline || connections.values.allSatisfy(\.isDraining)
    }

    func loopWillEnd(error: SocketError?) {
        if let error { logger.critical("event loop stopped: \(error)") }
        for connection in Array(connections.values) { close(connection) }
        teardown?()
        teardown = nil
        if isListening { eventLoop.unwatch(listener.descriptor) }
    }

    func loopDidEnd() {
        drainRequest?.done.resume()
        drainRequest = nil
    }
}

/// Makes the handler of one event loop, on that loop's thread before it waits for the first time, with the
/// loop as a `Reactor` that the handler's dependencies (a database driver) may watch their own descriptors
/// through.
public typealias LoopSetup = @Sendable (any Reactor) -> LoopHandler

/// What one event loop serves, and what to call on its thread as the loop ends.
public struct LoopHandler {
    public let handler: any Handler
    public let teardown: () -> Void

    public init(handler: any Handler, teardown: @escaping () -> Void = {}) {
        self.handler = handler
        self.teardown = teardown
    }
}
