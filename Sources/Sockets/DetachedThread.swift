#if canImport(Glibc)
    import Glibc
#endif

/// A detached OS thread, for work that blocks (in `epoll_wait`, `poll`) and so must not run on a
/// cooperative-pool task.
public enum DetachedThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `run` on a new thread that nobody joins.
    public static func start(_ run: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(run)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        precondition(result == 0, "pthread_create failed with \(result)")
        pthread_detach(thread)
    }
}
