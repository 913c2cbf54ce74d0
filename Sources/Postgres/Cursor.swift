/// A statement's rows read a batch at a time through a cursor (`DECLARE … NO SCROLL CURSOR`, `FETCH n`), so a
/// result of any size costs the client one batch of memory, and a reader that pauses leaves the rest in
/// PostgreSQL. bench/README.md ("Rows in batches") has the measurements behind choosing a cursor over libpq's
/// single-row mode.
///
/// A cursor lives in the transaction that declared it (it must be in one) and runs on that transaction's
/// connection. Each `FETCH` is a statement of its own, so `statement_timeout` bounds each batch, not the time
/// a reader takes for all of them. Batches aim at `batchBytes` of column text: the next batch's row count
/// comes from the bytes per row of the last (a power of two, so few FETCH texts are ever prepared).
public struct Cursor: Sendable {
    /// The most rows one batch asks for, however small the rows.
    public static let maxBatchRows = 8192

    public let name: SQLIdentifier
    /// The column text one batch aims at.
    public let batchBytes: Int
    /// Rows the next batch asks for.
    public private(set) var nextCount: Int
    /// Set once a batch came back short: every row has been read.
    public private(set) var isExhausted = false

    /// Declares `name` for `query` on `connection`, inside its open transaction; reads nothing yet.
    ///
    /// - Parameters:
    ///   - name: an identifier the program chose (never user input), unique among the transaction's open cursors.
    ///   - firstCount: rows the first batch asks for, before any row's size is known.
    public init(_ name: String, for query: Query, on connection: Connection, batchBytes: Int = 64 * 1024, firstCount: Int = 64) throws {
        self.name = SQLIdentifier(name)
        self.batchBytes = batchBytes
        nextCount = Self.rounded(firstCount)
        try connection.execute("DECLARE \(self.name) NO SCROLL CURSOR FOR " + query)
    }

    /// The next batch, at least one row; nil once every row has been read.
    public mutating func fetch(on connection: Connection) throws -> QueryResult? {
        guard !isExhausted else { return nil }
        let count = nextCount
        let rows = try connection.query("FETCH \(literal: count) FROM \(name)")
        isExhausted = rows.count < count
        if rows.count > 0 {
            let bytesPerRow = max(1, rows.valueBytes / rows.count)
            nextCount = Self.rounded(batchBytes / bytesPerRow)
        }
        return rows.count > 0 ? rows : nil
    }

    /// Closes the cursor, keeping the transaction open; ending the transaction closes it as well.
    public func close(on connection: Connection) throws {
        try connection.execute("CLOSE \(name)")
    }

    /// `count` clamped to 1…`maxBatchRows` and rounded down to a power of two.
    private static func rounded(_ count: Int) -> Int {
        let clamped = min(max(count, 1), maxBatchRows)
        return 1 << (Int.bitWidth - 1 - clamped.leadingZeroBitCount)
    }
}
