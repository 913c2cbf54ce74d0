import CLibPQ
import Foundation

/// libpq's `PG_DIAG_*` field codes, named once: they are C character literals that Swift does not import.
enum DiagnosticField: Int32 {
    case sqlState = 67  // 'C'
    case messagePrimary = 77  // 'M'
    case messageDetail = 68  // 'D'
    case messageHint = 72  // 'H'
    case schemaName = 115  // 's'
    case tableName = 116  // 't'
    case columnName = 99  // 'c'
    case constraintName = 110  // 'n'
}

extension PostgresError {
    /// Reads the diagnostic fields of a failed `PGresult`; `kind` is decided by the caller.
    init(result: OpaquePointer, kind: Kind, sql: String?) {
        func field(_ code: DiagnosticField) -> String? {
            PQresultErrorField(result, code.rawValue).map { String(cString: $0) }
        }
        self.init(
            kind: kind, sqlState: field(.sqlState).map(SQLState.init(rawValue:)),
            message: field(.messagePrimary) ?? Self.trimmed(PQresultErrorMessage(result)),
            detail: field(.messageDetail), sql: sql)
        hint = field(.messageHint)
        schema = field(.schemaName)
        table = field(.tableName)
        column = field(.columnName)
        constraint = field(.constraintName)
    }

    /// libpq's messages end in a newline; an empty message becomes nil.
    static func trimmed(_ message: UnsafePointer<CChar>?) -> String? {
        guard let message else { return nil }
        let text = String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
