import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The `Date` field every answer carries (RFC 9110 §6.6.1: an origin server with a clock sends one), in
/// the IMF-fixdate form of RFC 9110 §5.6.7, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
///
/// The text changes once a second, so it is formatted once a second and shared, not once per answer.
package enum HTTPDate {
    private static let cache = Mutex<(second: time_t, text: String)>((-1, ""))
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Now, to the second.
    package static func now() -> String {
        let second = time(nil)
        return cache.withLock { cache in
            if cache.second != second { cache = (second, format(second)) }
            return cache.text
        }
    }

    /// `seconds` since the epoch in IMF-fixdate, written by hand: `strftime` would follow the C locale's names.
    package static func format(_ seconds: time_t) -> String {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
    }
}
