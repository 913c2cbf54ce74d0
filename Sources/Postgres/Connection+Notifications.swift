import CLibPQ
import Glibc

/// One asynchronous notification (NOTIFY or `pg_notify`) received by a LISTENing connection.
///
/// Not named `Notification`, which Foundation already uses in every file that imports both.
struct ReceivedNotification: Sendable, Hashable {
    /// The channel it was sent on.
    var channel: String
    /// The payload text; empty when the sender gave none.
    var payload: String
}

extension Connection {
    /// The outcome of waiting for the server to send something.
    enum Readiness {
        case readable
        case timedOut
        /// Interrupted by a signal: nothing is known yet, the caller just loops.
        case interrupted
    }

    /// Starts listening on `channel`; the name is quoted as an identifier, so any text is safe.
    func listen(on channel: String) throws {
        try execute(script: "LISTEN \"\(channel.replacingOccurrences(of: "\"", with: "\"\""))\"")
    }

    /// Blocks up to `milliseconds` until the server's socket has data; throws when the connection is closed.
    func waitUntilReadable(milliseconds: Int32) throws -> Readiness {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(kind: .connectionLost, message: "connection is closed")
        }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 {
            guard errno == EINTR else {
                throw PostgresError(kind: .connectionLost, message: "poll failed with errno \(errno)")
            }
            return .interrupted
        }
        return ready == 0 ? .timedOut : .readable
    }

    /// Reads what the server sent and returns the notifications among it, without blocking.
    ///
    /// Throws `.connectionLost` when the server closed the connection (e.g. `pg_terminate_backend`).
    func readNotifications() throws -> [ReceivedNotification] {
        guard let handle else { throw PostgresError(kind: .connectionLost, message: "connection is closed") }
        guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(kind: .connectionLost, message: PostgresError.trimmed(PQerrorMessage(handle)))
        }
        var notifications: [ReceivedNotification] = []
        while let notify = PQnotifies(handle) {
            // libpq allocates the struct and its strings in one block, freed by one PQfreemem.
            notifications.append(
                ReceivedNotification(
                    channel: String(cString: notify.pointee.relname),
                    payload: notify.pointee.extra.map { String(cString: $0) } ?? ""))
            PQfreemem(notify)
        }
        return notifications
    }
}
