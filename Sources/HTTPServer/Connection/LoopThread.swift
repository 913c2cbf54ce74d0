#if canImport(Glibc)
import Glibc
#endif

/// A detached OS thread; the event loops need real threads, not cooperative-pool tasks,
/// because they block in epoll_wait.
enum LoopThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func detach(_ run: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(run)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        precondition(result == 0, "pthread_create failed with \(result)")
        pthread_detach(thread)
    }
}
