import CLibPQ

/// The rows of one statement, owning its `PGresult` and freeing it when the last reference goes.
///
/// Text format unless the query asked for binary (`Query.inBinary`); either way `Row` answers each column's text
/// (`withText`, `column`) and decodes it, converting a binary value (`PostgresBinary`) on demand.
// @unchecked Sendable: the PGresult is never mutated after libpq hands it over, and libpq documents
// such results as safe to read from any thread; `columnNames` is immutable.
public final class QueryResult: @unchecked Sendable {
    private let result: OpaquePointer
    /// Number of rows.
    public let count: Int
    /// Column names in order, exactly as the server reported them (case kept).
    public let columnNames: [String]

    init(taking result: OpaquePointer) {
        self.result = result
        count = Int(PQntuples(result))
        columnNames = (0..<PQnfields(result)).map { String(cString: PQfname(result, $0)) }
    }

    deinit {
        PQclear(result)
    }

    /// The length of every value's text, added up: about what the rows take in memory.
    public var valueBytes: Int {
        var total = 0
        let columns = PQnfields(result)
        for row in 0..<Int32(count) {
            for column in 0..<columns { total += Int(PQgetlength(result, row, column)) }
        }
        return total
    }

    /// Rows touched by INSERT/UPDATE/DELETE (or returned by SELECT); 0 when the command reports none.
    public var affectedRows: Int {
        Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    public subscript(row: Int) -> Row {
        precondition(row >= 0 && row < count, "row \(row) out of range 0..<\(count)")
        return Row(result: self, index: Int32(row))
    }

    /// The index of the column called `name`, compared exactly (no case folding, unlike `PQfnumber`).
    public func columnIndex(named name: String) -> Int? {
        columnNames.firstIndex(of: name)
    }

    /// Whether column `column`'s values are binary (`Query.inBinary`) rather than text.
    public func isBinary(column: Int) -> Bool {
        PQfformat(result, Int32(column)) == 1
    }

    /// The type of column `column` as the server describes it (a domain's base type).
    public func type(column: Int) -> PostgresType {
        PostgresType(oid: UInt32(PQftype(result, Int32(column))))
    }

    fileprivate func isNull(row: Int32, column: Int32) -> Bool {
        PQgetisnull(result, row, column) == 1
    }

    fileprivate func value(row: Int32, column: Int32) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(result, row, column))
        return UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: length)
    }
}

extension QueryResult: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
}

/// One row of a `QueryResult`; keeps the result alive while it exists.
public struct Row: Sendable {
    private let result: QueryResult
    private let index: Int32

    fileprivate init(result: QueryResult, index: Int32) {
        self.result = result
        self.index = index
    }

    /// The column's text, or nil for SQL NULL; a binary value as the text the server would have sent.
    public func column(_ i: Int) -> String? {
        var scratch: [UInt8] = []
        return withText(at: i, scratch: &scratch) { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// Calls `body` with the column's text (nil for NULL), valid only during the call: a text result's bytes as
    /// they are, a binary value converted into `scratch` (`PostgresBinary.appendText`), which the caller keeps
    /// between calls so that a row's values cost no allocation each. The bytes of a text type (text, `json`)
    /// are the same in both formats and are never copied.
    ///
    /// A binary value of a type `PostgresBinary` cannot print is a programming error (the query that asked for
    /// binary results selects it) and traps.
    public func withText<T>(at i: Int, scratch: inout [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> T) rethrows -> T {
        checkColumn(i)
        guard !result.isNull(row: index, column: Int32(i)) else { return try body(nil) }
        let column = Int32(i)
        return try withExtendedLifetime(result) {
            let value = result.value(row: index, column: column)
            guard result.isBinary(column: i) else { return try body(value) }
            let type = result.type(column: i)
            if PostgresBinary.isText(type) { return try body(value) }
            scratch.removeAll(keepingCapacity: true)
            guard PostgresBinary.appendText(value, type: type, to: &scratch) else {
                preconditionFailure("column \(result.columnNames[i]): cannot read binary \(type) (\(value.count) bytes)")
            }
            return try scratch.withUnsafeBytes { try body($0) }
        }
    }

    /// The column's raw bytes (nil for NULL), e.g. JSON the server rendered, passed through without a String:
    /// its text in a text result, its binary form in a binary one.
    public func bytes(at i: Int) -> [UInt8]? {
        checkColumn(i)
        guard !result.isNull(row: index, column: Int32(i)) else { return nil }
        return Array(result.value(row: index, column: Int32(i)))
    }

    /// Calls `body` with the column's raw bytes (nil for NULL), which stay valid only during the call: text in a
    /// text result, the binary form in a binary one (`withText` answers text from both).
    ///
    /// For rendering straight from libpq's buffer into a response, where `bytes(at:)` would copy each value.
    public func withBytes<T>(at i: Int, _ body: (UnsafeRawBufferPointer?) throws -> T) rethrows -> T {
        checkColumn(i)
        guard !result.isNull(row: index, column: Int32(i)) else { return try body(nil) }
        return try withExtendedLifetime(result) { try body(result.value(row: index, column: Int32(i))) }
    }

    /// Decodes column `i`; NULL decodes as nil for optional types and is an error otherwise.
    public func decode<T: PostgresDecodable>(_ type: T.Type, at i: Int) throws -> T {
        checkColumn(i)
        guard !result.isNull(row: index, column: Int32(i)) else {
            if let nullable = type as? NullablePostgresDecodable.Type, let null = nullable.null as? T {
                return null
            }
            throw PostgresError(kind: .decoding, message: "column \(result.columnNames[i]) is NULL, expected \(T.self)")
        }
        do {
            return try withExtendedLifetime(result) {
                let value = result.value(row: index, column: Int32(i))
                guard result.isBinary(column: i) else { return try T(postgresText: String(decoding: value, as: UTF8.self)) }
                return try T(postgresBinary: value, type: result.type(column: i))
            }
        } catch var error as PostgresError {
            error.column = result.columnNames[i]
            throw error
        }
    }

    /// Decodes the column called `name` (exact match).
    public func decode<T: PostgresDecodable>(_ type: T.Type, named name: String) throws -> T {
        guard let i = result.columnIndex(named: name) else {
            throw PostgresError(kind: .decoding, message: "no column named \(name) in the result")
        }
        return try decode(type, at: i)
    }

    private func checkColumn(_ i: Int) {
        precondition(i >= 0 && i < result.columnNames.count, "column \(i) out of range")
    }
}
