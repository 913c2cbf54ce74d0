/// Records written as CSV (RFC 4180): fields separated by commas, each record ended by CRLF (§2.1), a field
/// quoted when it holds a comma, a quote, CR or LF, with its quotes doubled (§2.6, §2.7).
struct CSVText {
    /// RFC 4180 §3 registers `text/csv`; our fields are UTF-8.
    static let contentType = "text/csv; charset=utf-8"

    private(set) var bytes: [UInt8] = []

    /// Appends one record.
    mutating func append(_ fields: [String]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            let needsQuotes = field.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 13 || $0 == 10 }
            guard needsQuotes else {
                bytes += field.utf8
                continue
            }
            bytes.append(UInt8(ascii: "\""))
            for byte in field.utf8 {
                if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes += [13, 10]
    }
}
