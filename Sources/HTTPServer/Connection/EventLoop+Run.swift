import Sockets

#if canImport(Glibc)
import Glibc
#endif

/// The loop thread's side of `EventLoop`: everything here runs on that thread only.
extension EventLoop {
    func run() {
        loopThread.withLock { $0 = pthread_self() }
        teardown = setup?(self)
        let ready = Epoll.ReadyList(capacity: 256)
        var nextSweep = ContinuousClock.now + sweepInterval
        while true {
            let wakeAt = drainRequest.map { min($0.deadline, nextSweep) } ?? nextSweep
            let wait = max(.zero, wakeAt - ContinuousClock.now)
            do {
                try epoll.wait(into: ready, timeoutMilliseconds: Int32(wait.wholeMilliseconds + 1))
            } catch {
                logger.critical("event loop stopped: \(error)")
                return finish()
            }
            let now = ContinuousClock.now
            for index in 0..<ready.count {
                handle(ready[index], now: now)
            }
            // Jobs and answers this thread posted to itself wake nobody: run them all before waiting again.
            while receiveMessages(now: now) {}
            if now >= nextSweep {
                nextSweep = now + sweepInterval
                for connection in Array(connections.values) {
                    connection.sweep(now: now, isStopping: drainRequest != nil)
                }
                for check in periodicChecks { check(now) }
            }
            // Connections that have had their last answer only linger for the peer's FIN; not worth waiting for.
            if let drainRequest, now >= drainRequest.deadline || connections.values.allSatisfy(\.isDraining) {
                return finish()
            }
        }
    }

    private func handle(_ event: Epoll.Event, now: ContinuousClock.Instant) {
        switch event.descriptor {
        case notifier.descriptor:
            try? notifier.drain()
        // Only while listening: once the server closed the listener its number may be reused, e.g. by a
        // database connection a Reactor watcher opened during the drain, whose events go to `default`.
        case listener.descriptor where isListening:
            acceptConnections(now: now)
        default:
            guard let connection = connections[event.descriptor] else {
                watchers[event.descriptor]?(event.events)
                return
            }
            if event.events.contains(.writable) { connection.writable(now: now) }
            if event.events.contains(.readable) || event.events.contains(.hangUp) {
                guard connections[event.descriptor] === connection else { return }
                connection.readable(now: now)
            }
        }
    }

    private func acceptConnections(now: ContinuousClock.Instant) {
        // A bounded batch per wake-up leaves other loops a share of a burst of connections.
        for _ in 0..<64 {
            let socket: Socket
            do {
                guard let accepted = try listener.accept() else { return }
                socket = accepted
            } catch {
                return logger.error("accept failed: \(error)")
            }
            guard group.admit(limit: limits.maxConnections) else {
                refuse(socket)
                continue
            }
            let owner = group.assignConnection(acceptedBy: self)
            if owner === self {
                adopt(socket, now: now)
            } else {
                owner.post(.adopt(socket))
            }
        }
    }

    /// Makes an accepted socket a Connection of this loop.
    private func adopt(_ socket: Socket, now: ContinuousClock.Instant) {
        do {
            // One write per response is only fast if Nagle does not hold it back.
            try socket.setNoDelay()
            try epoll.add(socket.descriptor, for: .readable)
        } catch {
            logger.warning("dropping new connection: \(error)")
            return forget(socket)
        }
        nextSerial += 1
        connections[socket.descriptor] = Connection(socket: socket, serial: nextSerial, loop: self, now: now)
    }

    /// Answers a connection over `Limits.maxConnections` with 503 and closes it; the open ones go on.
    ///
    /// The answer fits any socket buffer, so one non-blocking send either delivers it or the client is gone.
    private func refuse(_ socket: Socket) {
        logger.warning("refusing a connection: \(limits.maxConnections) are open already")
        let problem = Problem(
            .serviceUnavailable, detail: "The server has too many open connections; retry shortly.",
            headers: Headers([("Retry-After", "1")]))
        let bytes = ResponseSerializer.serialize(
            problem.response, requestID: RequestID.make(), isHead: false, keepAlive: false, isHTTP10: false)
        _ = try? bytes.withUnsafeBytes { try socket.send($0) }
        try? socket.shutdownWrite()
        socket.close()
    }

    /// Acts on every message in the inbox; false when there was none.
    private func receiveMessages(now: ContinuousClock.Instant) -> Bool {
        let messages = inbox.withLock { inbox in
            defer { inbox.messages.removeAll(keepingCapacity: true) }
            return inbox.messages
        }
        for message in messages {
            switch message {
            case .job(let job):
                job.runSynchronously(on: executor.asUnownedTaskExecutor())
            case .response(let descriptor, let serial, let bytes, let closeAfter):
                guard let connection = connections[descriptor], connection.serial == serial else { continue }
                connection.deliver(bytes, closeAfter: closeAfter || drainRequest != nil, now: now)
            case .stopAccepting(let done):
                if isListening {
                    isListening = false
                    try? epoll.remove(listener.descriptor)
                }
                done.resume()
            case .adopt(let socket):
                // A connection handed over while draining would only be closed again at once.
                if drainRequest != nil { forget(socket) } else { adopt(socket, now: now) }
            case .drain(let deadline, let done):
                drainRequest = (deadline, done)
                for connection in Array(connections.values) where connection.isIdle {
                    close(connection)
                }
            }
        }
        return !messages.isEmpty
    }

    /// Closes everything this loop owns and reports the drain as done.
    private func finish() {
        let pending = inbox.withLock { inbox in
            inbox.isClosed = true
            defer { inbox.messages = [] }
            return inbox.messages
        }
        for connection in Array(connections.values) { close(connection) }
        teardown?()
        teardown = nil
        periodicChecks = []
        if isListening { try? epoll.remove(listener.descriptor) }
        notifier.close()
        epoll.close()
        drainRequest?.done.resume()
        drainRequest = nil
        // Whoever is still waiting on this loop must not wait forever.
        for message in pending { release(message) }
    }
}

extension Limits {
    /// The most a connection buffers while its handler runs: one maximal request.
    var maxBufferedBytes: Int { maxRequestLineBytes + maxHeaderBytes + maxBodyBytes }
}
