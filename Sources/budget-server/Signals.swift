import CLinux
import Dispatch
import Foundation
import Synchronization

/// SIGTERM and SIGINT, the signals that ask for a graceful stop (docs/operations.md, Shutdown).
///
/// The first one starts the graceful stop: `wait()` returns it. A second one, while requests drain, means
/// "stop now": the process exits at once with status 128 + that signal's number (130 for SIGINT, 143 for
/// SIGTERM), the status a shell reports for a process the signal ended, so a supervisor can tell a cut-short
/// stop from a clean one (0).
enum TerminationSignal {
    /// Starts catching the signals; until then either one ends the process on the spot, skipping every
    /// cleanup. Call it before starting anything that must be undone (the embedded PostgreSQL): a signal that
    /// arrives during start-up is then kept, and `wait()` returns it as soon as the server is up.
    static func startCatching() {
        listener.start()
    }

    /// Sets what runs (on the signal queue) when a second signal arrives, just before the process exits.
    static func beforeImmediateExit(_ body: @escaping @Sendable (Int32) -> Void) {
        listener.setBeforeImmediateExit(body)
    }

    /// Returns the first termination signal received, at once if one arrived already; catches from now on.
    static func wait() async -> Int32 {
        listener.start()
        return await listener.firstSignal()
    }

    /// The exit status after a second `signal`.
    static func immediateExitStatus(for signal: Int32) -> Int32 {
        128 + signal
    }

    private static let listener = SignalListener(signals: [SIGTERM, SIGINT])
}

/// Owns the dispatch sources, which must stay alive to hear the second signal.
private final class SignalListener: Sendable {
    private struct State {
        var sources: [any DispatchSourceSignal] = []
        var first: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
        var beforeImmediateExit: (@Sendable (Int32) -> Void)?
    }

    private let signals: [Int32]
    private let queue = DispatchQueue(label: "budget-server.signals")
    private let state = Mutex(State())

    init(signals: [Int32]) { self.signals = signals }

    /// Installs the sources once; later calls do nothing.
    ///
    /// Dispatch hears a signal only once the default action (terminate) is off, and installs its own handler
    /// only when the source is registered, on its manager thread, some time after `resume()`. Until then the
    /// signal is caught by a handler that records it (ignoring it instead would discard it: the server then
    /// missed a SIGINT sent in that window and ran on), and the registration hands what it recorded over.
    func start() {
        state.withLock { state in
            guard state.sources.isEmpty else { return }
            for number in signals {
                clinux_record_signal(number)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { [self] in received(number) }
                source.setRegistrationHandler { [self] in
                    if clinux_take_recorded_signal(number) != 0 { received(number) }
                }
                state.sources.append(source)
            }
            state.sources.forEach { $0.resume() }
        }
    }

    func setBeforeImmediateExit(_ body: @escaping @Sendable (Int32) -> Void) {
        state.withLock { $0.beforeImmediateExit = body }
    }

    func firstSignal() async -> Int32 {
        await withCheckedContinuation { continuation in
            let first: Int32? = state.withLock { state in
                if state.first == nil { state.waiters.append(continuation) }
                return state.first
            }
            if let first { continuation.resume(returning: first) }
        }
    }

    private func received(_ number: Int32) {
        let (isFirst, waiters, beforeExit) = state.withLock { state in
            defer { state.waiters = [] }
            if state.first == nil {
                state.first = number
                return (true, state.waiters, state.beforeImmediateExit)
            }
            return (false, [], state.beforeImmediateExit)
        }
        guard isFirst else {
            // A second signal means "stop now": skip the grace period and every cleanup that could wait.
            beforeExit?(number)
            _exit(TerminationSignal.immediateExitStatus(for: number))
        }
        waiters.forEach { $0.resume(returning: number) }
    }
}
