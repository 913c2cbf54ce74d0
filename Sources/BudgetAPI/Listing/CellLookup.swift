import Postgres

/// Text a CSV row shows for a key member, read once per answer in the answer's snapshot rather than joined
/// to every row: a transaction's `category`, its category's title by `categoryId` (docs/api.md, CSV).
///
/// A join cost PostgreSQL about a quarter more CPU on a 10,000-row export than the same page as JSON
/// (bench/README.md, CSV export); a dictionary of a few hundred titles costs next to nothing.
struct CellLookup: Sendable {
    /// Two columns, an integer key and its text, e.g. `SELECT id, title FROM categories`.
    let query: Query
    /// The record member (its index among `PlainRecord`'s columns) whose integer is replaced by its text.
    let member: Int
}

/// A `CellLookup`'s rows, as `PlainRecord.appendCSV` reads them.
struct CellTable {
    let member: Int
    private let texts: [Int64: [UInt8]]

    init(_ result: QueryResult, member: Int) throws {
        var texts: [Int64: [UInt8]] = [:]
        texts.reserveCapacity(result.count)
        for row in result {
            texts[try row.decode(Int64.self, at: 0)] = row.withBytes(at: 1) { $0.map { Array($0) } } ?? []
        }
        self.member = member
        self.texts = texts
    }

    /// The text of the key whose decimal digits are `key`; nil for a key it does not hold.
    func text(forKey key: UnsafeRawBufferPointer) -> [UInt8]? {
        var value: Int64 = 0
        for byte in key {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value &* 10 &+ Int64(byte - UInt8(ascii: "0"))
        }
        return texts[value]
    }
}
