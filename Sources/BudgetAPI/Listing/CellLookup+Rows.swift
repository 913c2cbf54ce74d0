import Postgres

// A lookup's rows, apart from its declaration so that code which only declares records (the fuzz targets'
// build, fuzz/run) needs none of the result types.

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
