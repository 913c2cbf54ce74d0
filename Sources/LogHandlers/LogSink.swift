import Sockets
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Takes finished log lines from any thread and writes them to a file descriptor from a thread of its own.
///
/// An access-log line per request written straight to standard error cost a `write(2)` on the event
/// loop's thread for every request: a sixth of `/health`'s CPU in `perf`. Here a line is appended to a
/// buffer under a lock; the writer thread wakes on the first line of a batch, waits `batchInterval` for
/// more, and writes the whole batch with one call. Lines keep the order in which they were appended.
///
/// Nothing is lost on a normal exit: `standardError` flushes itself at `exit(3)`, and `flush()` writes
/// what is pending at once. A crash loses at most the last `batchInterval` of lines. When the writer falls
/// behind (a blocked pipe) by more than `maxPendingBytes`, the appending thread writes the batch itself,
/// which slows that thread rather than growing memory without bound.
public final class LogSink: Sendable {
    /// The process's standard error, flushed at exit.
    public static let standardError: LogSink = {
        let sink = LogSink(descriptor: STDERR_FILENO)
        atexit { LogSink.standardError.flush() }
        return sink
    }()

    static let batchInterval: Duration = .milliseconds(10)
    static let maxPendingBytes = 1 << 20

    private let descriptor: Int32
    private let pending = Mutex<[UInt8]>([])
    /// Held while a batch is taken and written, so that batches reach the descriptor in order.
    private let writing = Mutex<Void>(())
    private let wakeUp: EventNotifier?

    /// A sink writing to `descriptor`, which it does not close.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
        wakeUp = try? EventNotifier()
        if let wakeUp {
            DetachedThread.start { [self] in writeBatches(wakeUp) }
        }
    }

    /// Appends `line` (its newline included); written within `batchInterval`.
    public func write(_ line: some Sequence<UInt8>) {
        let (wasEmpty, isOverfull) = pending.withLock { pending in
            let wasEmpty = pending.isEmpty
            pending.append(contentsOf: line)
            return (wasEmpty, pending.count > Self.maxPendingBytes)
        }
        guard let wakeUp, !isOverfull else { return flush() }
        if wasEmpty { try? wakeUp.notify() }
    }

    /// Writes every appended line now.
    public func flush() {
        writing.withLock { _ in
            let batch = pending.withLock { pending in
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            writeFully(batch)
        }
    }

    /// The writer thread: sleeps until a batch starts, lets it fill for `batchInterval`, writes it.
    private func writeBatches(_ wakeUp: EventNotifier) {
        let pause = useconds_t(Self.batchInterval.wholeMicroseconds)
        var descriptor = pollfd(fd: wakeUp.descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            guard poll(&descriptor, 1, -1) >= 0 || errno == EINTR else { return }
            try? wakeUp.drain()
            usleep(pause)
            flush()
        }
    }

    private func writeFully(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return  // nowhere left to say so
                }
            }
        }
    }
}
