/// A `Duration` in the units system calls and libraries take; the one place that does this arithmetic.
extension Duration {
    /// Whole milliseconds, rounded down: what `epoll_wait`, `poll` and PostgreSQL's `statement_timeout` take.
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// Whole microseconds, rounded down: what `usleep` takes.
    public var wholeMicroseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }

    /// Seconds as a floating-point number, like Foundation's `TimeInterval`.
    public var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
