import Dispatch
import Foundation
import Synchronization

/// Waits for SIGTERM or SIGINT, the signals that ask for a graceful stop (SPEC §6).
enum TerminationSignal {
    /// Returns the first termination signal received; a second one ends the process at once.
    static func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            listener.listen(resuming: continuation)
        }
    }

    private static let listener = SignalListener(signals: [SIGTERM, SIGINT])
}

/// Owns the dispatch sources, which must stay alive to hear the second signal.
// @unchecked Sendable: `sources` is written once, inside `listen`, before any source is resumed, and
// never read afterwards; `hasResumed` is guarded by its mutex.
private final class SignalListener: @unchecked Sendable {
    private let signals: [Int32]
    private let queue = DispatchQueue(label: "budget-server.signals")
    private var sources: [any DispatchSourceSignal] = []
    private let hasResumed = Mutex(false)

    init(signals: [Int32]) { self.signals = signals }

    func listen(resuming continuation: CheckedContinuation<Int32, Never>) {
        for number in signals {
            // Dispatch hears the signal only once the default action (terminate) is off.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                let isFirst = self.hasResumed.withLock { wasResumed in
                    defer { wasResumed = true }
                    return !wasResumed
                }
                guard isFirst else {
                    // A second signal means "stop now": skip the grace period.
                    exit(1)
                }
                continuation.resume(returning: number)
            }
            sources.append(source)
        }
        sources.forEach { $0.resume() }
    }
}
