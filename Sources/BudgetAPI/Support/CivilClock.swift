import Postgres

/// What "today" and "this month" are for the server: the instant it takes as now, seen in its time zone
/// (`--time-zone`, docs/configuration.md).
///
/// The zone decides only the default `date` of a new transaction and what `month=current` means; every other
/// date is civil (`YYYY-MM-DD`) and never depends on it. Both are computed by PostgreSQL from a bound zone name,
/// in the statement that needs them, so they cost no round trip and the server needs no time zone data of
/// its own. `serve` checks the name against PostgreSQL's zones before it answers a request.
public struct CivilClock: Sendable {
    /// An IANA time zone name, such as `UTC` or `Asia/Tokyo`.
    public var timeZone: String
    /// The instant taken as now; nil takes PostgreSQL's `now()` (the transaction's start, which also
    /// stamps `createdAt`). Tests set it to stand at a month's last minutes.
    public var now: Timestamp?

    public init(timeZone: String = "UTC", now: Timestamp? = nil) {
        self.timeZone = timeZone
        self.now = now
    }

    private var instant: Query {
        now.map { "\($0)::timestamptz" } ?? "now()"
    }

    /// Today's date in the zone, as a `date` expression.
    var today: Query {
        "(\(instant) AT TIME ZONE \(timeZone))::date"
    }

    /// The first day of the current month in the zone, as a `date` expression.
    var currentMonth: Query {
        "date_trunc('month', \(instant) AT TIME ZONE \(timeZone))::date"
    }

    /// Whether PostgreSQL on `connection` knows `timeZone` as one of its IANA zone names (an abbreviation
    /// such as `CEST` or a POSIX rule such as `UTC+3` is not one). Blocking: call it at start-up.
    public static func knows(_ timeZone: String, on connection: Connection) throws -> Bool {
        try connection.query("SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = \(timeZone))")[0].decode(Bool.self, at: 0)
    }
}
