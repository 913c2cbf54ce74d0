import Foundation
import Logging
import Sockets

/// The loop of the listener thread: keeps one LISTENing connection alive and feeds the core.
///
/// Only its own thread touches a listener, so its state needs no lock.
// @unchecked Sendable: created on the starting thread, then used only by its own thread.
final class NotificationListener: @unchecked Sendable {
    private let core: NotificationCore
    private var connection: Connection?
    private var retryAt: ContinuousClock.Instant = .now
    private var retryDelay = NotificationListener.initialRetryDelay
    private var hasReportedFailure = false
    /// When the server last proved alive; a silent connection is probed, since a vanished peer sends nothing.
    private var lastHeardFrom: ContinuousClock.Instant = .now

    private static let initialRetryDelay = Duration.milliseconds(50)
    private static let maximumRetryDelay = Duration.seconds(2)
    private static let probeInterval = Duration.seconds(30)

    init(core: NotificationCore) {
        self.core = core
    }

    func run() {
        while !core.isStopped {
            let untilDeadline = core.expireWaiters()
            if connection == nil, ContinuousClock.now >= retryAt { connect() }
            guard let connection else {
                Thread.sleep(forTimeInterval: min(untilDeadline, max(.zero, retryAt - .now)).timeInterval)
                continue
            }
            do {
                try listen(on: connection, for: untilDeadline)
            } catch {
                core.logger.warning(
                    "notification connection lost; reconnecting",
                    metadata: ["channel": "\(core.channel)"])
                dropConnection()
                // Whatever was sent while we are away is lost: waiters look at the database again.
                core.bumpGeneration()
            }
        }
        connection?.close()
    }

    /// Waits up to `duration` for the socket and hands every notification on our channel to the core.
    private func listen(on connection: Connection, for duration: Duration) throws {
        let milliseconds = Int32(duration.wholeMilliseconds)
        switch try connection.waitUntilReadable(milliseconds: milliseconds) {
        case .readable:
            lastHeardFrom = .now
            deliver(try connection.readNotifications())
        case .timedOut:
            if ContinuousClock.now - lastHeardFrom >= Self.probeInterval {
                try connection.execute(script: "SELECT 1")
                lastHeardFrom = .now
                // Notifications that arrived during the probe wait in libpq, not in the socket.
                deliver(try connection.readNotifications())
            }
        case .interrupted:
            break
        }
    }

    /// Hands the core each notification on our channel, with its payload.
    private func deliver(_ notifications: [ReceivedNotification]) {
        for notification in notifications where notification.channel == core.channel {
            core.received(payload: notification.payload)
        }
    }

    private func connect() {
        do {
            let fresh = try Connection.connect(to: core.url)
            try fresh.listen(on: core.channel)
            connection = fresh
            core.isListening = true
            lastHeardFrom = .now
            retryDelay = Self.initialRetryDelay
            if hasReportedFailure { core.logger.info("notification connection restored") }
            hasReportedFailure = false
            // Listening from now on; anything committed before is for the waiters' next look.
            core.bumpGeneration()
        } catch {
            if !hasReportedFailure {
                core.logger.error("cannot listen for notifications", metadata: ["error": "\(String(reflecting: error))"])
            }
            hasReportedFailure = true
            retryAt = .now + retryDelay
            retryDelay = min(retryDelay * 2, Self.maximumRetryDelay)
        }
    }

    private func dropConnection() {
        core.isListening = false
        connection?.close()
        connection = nil
        retryAt = .now
    }
}
