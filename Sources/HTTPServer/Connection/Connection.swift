import Logging
import Sockets

/// One accepted TCP connection and its HTTP/1.1 state machine, owned by a single `ServerLoop`.
///
/// Not Sendable and never shared: only the owning loop's thread calls into it (see ServerLoop.swift).
/// One request is in flight at a time; pipelined requests wait in `input` until the previous
/// answer is written, so answers leave in request order (RFC 9112 §9.3.2).
final class Connection {
    enum Phase {
        /// Between requests, nothing received yet.
        case idle(since: ContinuousClock.Instant)
        /// Part of a request has arrived; the request timeout runs from its first byte.
        case receiving(since: ContinuousClock.Instant)
        /// The handler has the request; the connection waits for its answer.
        case handling
        /// Last answer sent and FIN sent; reading and discarding until the peer closes or time runs out.
        case draining(until: ContinuousClock.Instant)
    }

    let socket: Socket
    /// Distinguishes this connection from a later one that reuses the descriptor number.
    let serial: UInt64
    /// The peer's numeric address, read once when the connection is adopted; nil if the kernel would not say.
    let peer: String?
    private(set) var phase: Phase
    /// Bytes received and not yet consumed; empty (no allocation) for an idle connection.
    private var input: [UInt8] = []
    /// A head already parsed whose body has not fully arrived.
    private var pendingHead: RequestHead?
    private var hasSentContinue = false
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var lastWriteProgress: ContinuousClock.Instant
    private var closesAfterWrite = false
    private var requestsReceived = 0
    private var isPeerClosed = false
    private var interest: Epoll.Events = .readable
    /// The Task running the handler while `phase` is `.handling`; cancelled when the connection closes first.
    private var handlerTask: Task<Void, Never>?
    /// A streamed answer's producer waiting for `output` to drain before it makes the next piece.
    private var roomWaiter: CheckedContinuation<Void, any Error>?
    /// Set once the loop has closed the connection; a streamed answer's task may still hold it.
    private(set) var isClosed = false
    private unowned let loop: ServerLoop

    init(socket: Socket, serial: UInt64, loop: ServerLoop, now: ContinuousClock.Instant) {
        self.socket = socket
        self.serial = serial
        self.peer = try? socket.peerAddress().host
        self.loop = loop
        self.phase = .idle(since: now)
        self.lastWriteProgress = now
    }

    var isIdle: Bool {
        if case .idle = phase { return input.isEmpty && output.isEmpty }
        return false
    }

    var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    // MARK: Reading

    func readable(now: ContinuousClock.Instant) {
        let scratch = loop.readBuffer
        while true {
            let result: Socket.ReadResult
            do { result = try socket.read(into: scratch) } catch {
                return loop.close(self)
            }
            switch result {
            case .bytes(let count):
                if case .draining = phase { break }
                input.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                if count == scratch.count { continue }
            case .wouldBlock:
                break
            case .endOfStream:
                return peerClosed()
            }
            break
        }
        processInput(now: now)
        // Backpressure: while a handler runs, stop reading once a whole request's worth is queued.
        if case .handling = phase, input.count > loop.limits.maxBufferedBytes { updateInterest() }
    }

    private func peerClosed() {
        isPeerClosed = true
        switch phase {
        case .handling:
            // Nobody is left to read the answer. Closing cancels the handler, which ends what it waits on
            // (a long-poll's notification wait) instead of holding it until its own timeout.
            loop.close(self)
        default:
            if output.isEmpty { loop.close(self) } else { closesAfterWrite = true; updateInterest() }
        }
    }

    /// Parses and dispatches the next request if the connection is free to take one.
    private func processInput(now: ContinuousClock.Instant) {
        switch phase {
        case .idle, .receiving: break
        case .handling, .draining: return
        }
        guard output.isEmpty, !input.isEmpty else { return }
        if case .idle = phase { phase = .receiving(since: now) }
        if pendingHead == nil {
            switch input.withUnsafeBytes({ loop.parser.parseHead($0) }) {
            case .incomplete:
                return
            case .invalid(let problem):
                return fail(problem)
            case .complete(let head, let consumed):
                input.removeFirst(consumed)
                pendingHead = head
                hasSentContinue = false
            }
        }
        guard let head = pendingHead, let body = takeBody(for: head) else { return }
        pendingHead = nil
        phase = .handling
        if input.isEmpty && input.capacity > 16 * 1024 { input = [] }
        var request = Request(
            method: head.method, target: head.target, components: head.components,
            headers: head.headers, body: body, isHTTP10: head.isHTTP10, peer: peer
        )
        requestsReceived += 1
        // The last request a connection may carry is answered with `Connection: close`.
        if requestsReceived >= loop.limits.maxRequestsPerConnection { request.isKeepAlive = false }
        handlerTask = loop.dispatch(request, isHTTP10: head.isHTTP10, for: self)
    }

    /// The whole body once it has arrived, or nil while waiting (after a framing fault too).
    private func takeBody(for head: RequestHead) -> [UInt8]? {
        switch head.framing {
        case .none:
            return []
        case .length(let length):
            guard input.count >= length else {
                // Room for the whole body at once (its size is within the limit), rather than doubling as it
                // arrives: a large upload then holds its size once, not up to twice.
                if input.capacity < length { input.reserveCapacity(length) }
                sendContinueIfWanted(head)
                return nil
            }
            guard input.count > length else {
                // The usual case, nothing pipelined behind the body: the buffer becomes the body, uncopied.
                defer { input = [] }
                return input
            }
            let body = Array(input[..<length])
            input.removeFirst(length)
            return body
        case .chunked:
            switch input.withUnsafeBytes({ loop.decoder.decode($0, maxBodyBytes: loop.limits.maxBodyBytes(forPath: head.components.path)) }) {
            case .incomplete:
                sendContinueIfWanted(head)
                return nil
            case .invalid(let problem):
                fail(problem)
                return nil
            case .complete(let body, let consumed):
                input.removeFirst(consumed)
                return body
            }
        }
    }

    /// RFC 9110 §10.1.1: invite the body only when it is wanted and has not started arriving.
    private func sendContinueIfWanted(_ head: RequestHead) {
        guard head.expectsContinue, !hasSentContinue, input.isEmpty else { return }
        hasSentContinue = true
        write(ResponseSerializer.continueResponse)
    }

    /// Answers a framing fault itself (it never reaches a handler) and closes.
    func fail(_ problem: Problem) {
        let id = RequestID.make()
        var metadata: Logger.Metadata = ["request-id": "\(id)"]
        if let peer { metadata["client"] = "\(peer)" }
        loop.logger.info("framing fault: \(problem.status.code) \(problem.detail ?? "")", metadata: metadata)
        pendingHead = nil
        input = []
        closesAfterWrite = true
        phase = .handling
        let bytes = ResponseSerializer.serialize(problem.response, requestID: id, isHead: false, keepAlive: false, isHTTP10: false)
        deliver(bytes, closeAfter: true, now: ContinuousClock.now)
    }

    // MARK: Writing

    /// Takes the handler's serialized answer; drops it if the connection has moved on.
    func deliver(_ bytes: [UInt8], closeAfter: Bool, now: ContinuousClock.Instant) {
        guard case .handling = phase else { return }
        handlerTask = nil
        closesAfterWrite = closesAfterWrite || closeAfter
        phase = .idle(since: now)
        write(bytes)
    }

    /// Sends the head (and first part) of a streamed answer; the connection stays busy with this request.
    func startStream(_ bytes: [UInt8]) {
        guard case .handling = phase, !isClosed else { return }
        write(bytes)
    }

    /// Queues one more part of a streamed answer, already framed as a chunk.
    func sendStreamPart(_ bytes: [UInt8]) {
        guard case .handling = phase, !isClosed else { return }
        write(bytes)
    }

    /// Returns once everything written so far has left for the kernel's buffer: a streamed answer makes its
    /// next piece only then, so a client that reads slowly holds back the producer, not the server's memory.
    /// Throws `CancellationError` when the connection closes first.
    func waitForRoom() async throws {
        guard !isClosed else { throw CancellationError() }
        guard !output.isEmpty else { return }
        try await withCheckedThrowingContinuation { roomWaiter = $0 }
    }

    private func wakeRoomWaiter(throwing error: (any Error)? = nil) {
        guard let waiter = roomWaiter else { return }
        roomWaiter = nil
        if let error { waiter.resume(throwing: error) } else { waiter.resume() }
    }

    private func write(_ bytes: [UInt8]) {
        if output.isEmpty {
            output = bytes
            outputOffset = 0
        } else {
            output.append(contentsOf: bytes)
        }
        flush(now: ContinuousClock.now)
    }

    func writable(now: ContinuousClock.Instant) {
        flush(now: now)
    }

    private func flush(now: ContinuousClock.Instant) {
        while outputOffset < output.count {
            let sent: Int?
            do {
                sent = try output.withUnsafeBytes { try socket.send(UnsafeRawBufferPointer(rebasing: $0[outputOffset...])) }
            } catch {
                return loop.close(self)
            }
            guard let sent else { return updateInterest() }
            outputOffset += sent
            lastWriteProgress = now
        }
        output = []
        outputOffset = 0
        wakeRoomWaiter()
        if closesAfterWrite { return startDraining(now: now) }
        updateInterest()
        processInput(now: now)
    }

    /// Sends FIN and reads until the peer closes, so unread request bytes do not turn our last
    /// answer into a reset (the "lingering close" of RFC 9112 §9.6).
    private func startDraining(now: ContinuousClock.Instant) {
        guard !isPeerClosed, (try? socket.shutdownWrite()) != nil else { return loop.close(self) }
        input = []
        phase = .draining(until: now + .seconds(2))
        updateInterest()
    }

    /// Cancels the handler still working for this connection, and a streamed answer waiting to send more;
    /// the loop calls it when it closes the connection.
    func closed() {
        isClosed = true
        handlerTask?.cancel()
        handlerTask = nil
        wakeRoomWaiter(throwing: CancellationError())
    }

    // MARK: Readiness and time

    private func updateInterest() {
        var wanted: Epoll.Events = []
        let isBackedUp: Bool
        if case .handling = phase { isBackedUp = input.count > loop.limits.maxBufferedBytes } else { isBackedUp = false }
        if !isPeerClosed && !isBackedUp { wanted.insert(.readable) }
        if !output.isEmpty { wanted.insert(.writable) }
        guard wanted != interest else { return }
        interest = wanted
        do { try loop.eventLoop.rewatch(socket.descriptor, for: wanted) } catch { loop.close(self) }
    }

    /// Applies the timeouts; called by the loop's periodic sweep.
    func sweep(now: ContinuousClock.Instant, isStopping: Bool) {
        let limits = loop.limits
        switch phase {
        case .idle(let since):
            if isIdle && (isStopping || now - since > limits.idleTimeout) { return loop.close(self) }
        case .receiving(let since):
            if now - since > limits.requestTimeout {
                return fail(Problem(.requestTimeout, detail: "The request was not completed within \(limits.requestTimeout)."))
            }
        case .handling:
            break
        case .draining(let until):
            if now > until { return loop.close(self) }
        }
        if !output.isEmpty && now - lastWriteProgress > limits.idleTimeout { loop.close(self) }
    }
}

extension Limits {
    /// The most a connection buffers while its handler runs: one maximal request.
    var maxBufferedBytes: Int { maxRequestLineBytes + maxHeaderBytes + maxBodyBytesByPath.values.reduce(maxBodyBytes, max) }
}
