/// Reads RFC 4180 records from UTF-8 bytes, one at a time, each with the line it starts on.
///
/// Hand-written rather than taken from the CSV libraries the build can use (docs/import.md, Why our own CSV
/// reader): both accept an unterminated quote, reading the rest of the file into one cell, and neither says
/// on which line a record starts once a quoted cell has held a line break, which an error must name.
///
/// Accepted beyond RFC 4180, as bank exports need: records ending in LF or a lone CR as well as CRLF, any
/// one-byte delimiter, a leading UTF-8 byte order mark, blank lines (skipped), and a `"` inside an unquoted
/// cell (kept as it is). A quoted cell must end at its closing quote: `"ab"x` is an error, not a guess.
public struct CSVReader {
    public enum Failure: Error, Equatable {
        /// A quoted cell opened on `line` never closes.
        case unterminatedQuote(line: Int)
        /// Something other than the delimiter or a line break follows a quoted cell's closing quote.
        case textAfterQuote(line: Int)
        /// A cell is not valid UTF-8.
        case notUTF8(line: Int)
        /// A cell holds U+0000, which PostgreSQL text cannot hold.
        case nul(line: Int)

        public var line: Int {
            switch self {
            case .unterminatedQuote(let line), .textAfterQuote(let line), .notUTF8(let line), .nul(let line): line
            }
        }

        public var message: String {
            switch self {
            case .unterminatedQuote: "a quoted cell opened on this line never closes (a \" is missing)"
            case .textAfterQuote:
                "a quoted cell must end at its closing quote, followed by the delimiter or the line's end (write a \" inside it as \"\")"
            case .notUTF8: "the line is not valid UTF-8; save the file as UTF-8"
            case .nul: "the line holds a NUL byte, which cannot be stored"
            }
        }
    }

    /// One record: its cells, and the line (from 1) its first cell is on.
    public struct Record: Equatable {
        public var line: Int
        public var cells: [String]
    }

    private let bytes: [UInt8]
    private let delimiter: UInt8
    private var position: Int
    /// The line `position` is on.
    private var line = 1

    public static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let quote = UInt8(ascii: "\"")
    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    public init(_ bytes: [UInt8], delimiter: UInt8 = UInt8(ascii: ",")) {
        self.bytes = bytes
        self.delimiter = delimiter
        position = bytes.starts(with: Self.byteOrderMark) ? Self.byteOrderMark.count : 0
    }

    /// The next record, or nil after the last one.
    public mutating func next() throws(Failure) -> Record? {
        skipBlankLines()
        guard position < bytes.count else { return nil }
        let start = line
        var cells: [String] = []
        while true {
            let (cell, endsRecord) = try readCell(recordLine: start)
            cells.append(cell)
            if endsRecord { return Record(line: start, cells: cells) }
        }
    }

    /// Every record, for inputs known to be small (tests, the fuzz target).
    public static func records(_ bytes: [UInt8], delimiter: UInt8 = UInt8(ascii: ",")) throws(Failure) -> [Record] {
        var reader = CSVReader(bytes, delimiter: delimiter)
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    private mutating func skipBlankLines() {
        while position < bytes.count, bytes[position] == Self.cr || bytes[position] == Self.lf {
            consumeLineBreak()
        }
    }

    /// Moves past the line break at `position` (CRLF, LF or CR).
    private mutating func consumeLineBreak() {
        if bytes[position] == Self.cr, position + 1 < bytes.count, bytes[position + 1] == Self.lf { position += 1 }
        position += 1
        line += 1
    }

    /// The cell at `position`, and whether the record ends after it (a line break or the end of the input).
    private mutating func readCell(recordLine: Int) throws(Failure) -> (String, Bool) {
        if position < bytes.count, bytes[position] == Self.quote { return try readQuotedCell(recordLine: recordLine) }
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == delimiter {
                let cell = try text(start..<position)
                position += 1
                return (cell, false)
            }
            if byte == Self.cr || byte == Self.lf {
                let cell = try text(start..<position)
                consumeLineBreak()
                return (cell, true)
            }
            position += 1
        }
        return (try text(start..<position), true)
    }

    private mutating func readQuotedCell(recordLine: Int) throws(Failure) -> (String, Bool) {
        let opening = line
        position += 1
        var cell: [UInt8] = []
        var start = position
        while true {
            guard position < bytes.count else { throw .unterminatedQuote(line: opening) }
            let byte = bytes[position]
            if byte == Self.quote {
                cell += bytes[start..<position]
                position += 1
                if position < bytes.count, bytes[position] == Self.quote {
                    // `""` inside a quoted cell is one quote (RFC 4180 §2.7).
                    cell.append(Self.quote)
                    position += 1
                    start = position
                    continue
                }
                break
            }
            if byte == Self.lf || (byte == Self.cr && !(position + 1 < bytes.count && bytes[position + 1] == Self.lf)) { line += 1 }
            position += 1
        }
        let text = try cell.withUnsafeBufferPointer { buffer throws(Failure) in try Self.text(buffer, line: recordLine) }
        guard position < bytes.count else { return (text, true) }
        if bytes[position] == delimiter {
            position += 1
            return (text, false)
        }
        guard bytes[position] == Self.cr || bytes[position] == Self.lf else { throw .textAfterQuote(line: line) }
        consumeLineBreak()
        return (text, true)
    }

    private func text(_ range: Range<Int>) throws(Failure) -> String {
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) in try Self.text(UnsafeBufferPointer(rebasing: buffer[range]), line: line) }
    }

    /// A cell's text; contiguous bytes, so that validating them takes the standard library's fast path.
    private static func text(_ cell: UnsafeBufferPointer<UInt8>, line: Int) throws(Failure) -> String {
        if cell.contains(0) { throw .nul(line: line) }
        guard let text = String(validating: cell, as: UTF8.self) else { throw .notUTF8(line: line) }
        return text
    }
}
