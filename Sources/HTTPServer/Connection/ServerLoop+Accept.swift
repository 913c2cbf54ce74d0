import Sockets

/// Accepting connections, owning them and handing them over: all on the event loop's thread.
extension ServerLoop {
    func acceptConnections(now: ContinuousClock.Instant) {
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
                owner.eventLoop.post(
                    { [owner] in
                        // A connection handed over while draining would only be closed again at once.
                        if owner.isDraining { owner.forget(socket) } else { owner.adopt(socket, now: owner.eventLoop.now) }
                    }, ifEnded: { [owner] in owner.forget(socket) })
            }
        }
    }

    /// Makes an accepted socket a Connection of this loop.
    private func adopt(_ socket: Socket, now: ContinuousClock.Instant) {
        nextSerial += 1
        let connection = Connection(socket: socket, serial: nextSerial, loop: self, now: now)
        do {
            // One write per response is only fast if Nagle does not hold it back.
            try socket.setNoDelay()
            try eventLoop.watch(socket.descriptor, for: .readable) { [unowned self] events in
                handle(events, for: connection)
            }
        } catch {
            logger.warning("dropping new connection: \(error)")
            return forget(socket)
        }
        connections[socket.descriptor] = connection
    }

    private func handle(_ events: Epoll.Events, for connection: Connection) {
        let now = eventLoop.now
        if events.contains(.writable) { connection.writable(now: now) }
        if events.contains(.readable) || events.contains(.hangUp) {
            guard connections[connection.socket.descriptor] === connection else { return }
            connection.readable(now: now)
        }
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
}
