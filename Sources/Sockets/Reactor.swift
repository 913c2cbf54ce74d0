/// A thread that waits for descriptors to become ready and calls back on itself: an event loop.
///
/// Lets code that knows nothing of the loop's owner (a database driver under an HTTP server) share its
/// thread and its `epoll_wait`, so that waiting on the database costs no thread of its own and no
/// hand-off between threads. Every method must be called on the reactor's own thread, and every handler
/// is called there.
public protocol Reactor: AnyObject {
    /// Calls `handler` with the readiness reported whenever `descriptor` is ready for `events` (or hung
    /// up); replaces an earlier registration of the same descriptor.
    func watch(_ descriptor: Int32, for events: Epoll.Events, handler: @escaping (Epoll.Events) -> Void) throws(SocketError)

    /// Changes what a watched descriptor is watched for.
    func rewatch(_ descriptor: Int32, for events: Epoll.Events) throws(SocketError)

    /// Stops watching `descriptor`; call it before closing the descriptor.
    func unwatch(_ descriptor: Int32)

    /// Calls `check` about once a second, for deadlines (there is no timer per request); for the
    /// reactor's whole life.
    func everySecond(_ check: @escaping (ContinuousClock.Instant) -> Void)
}
