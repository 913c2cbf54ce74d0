import BudgetCore
import HTTPServer

/// A bank statement's rows, read from CSV or a JSON array and each validated as a `POST /transactions` body
/// (`TransactionFields`), its errors named by line and column (docs/import.md).
///
/// Rows are not kept: `forEachRow` reads the statement again each time it is called, so an import holds the
/// file once as bytes and one batch of rows at a time, however long the file is (bench/import).
struct StatementRows: Sendable {
    /// How a row names its category, resolved against the database before the insert (`CategoryNames`).
    enum CategoryReference: Hashable, Sendable {
        case id(Int64)
        /// A cell that is a category's id or, failing that, its title (compared ignoring case).
        case name(String)
    }

    /// One valid row, its import id given or derived.
    struct Row {
        var line: Int
        /// Nil only in an account's statement: the row is then income or uncategorised by its sign.
        var category: CategoryReference?
        var title: String
        /// In this API's sense, whatever the statement's: positive is money spent.
        var amount: Money
        var day: String
        var note: String?
        var payee: String?
        var importID: String
        /// A JSON row's parts (docs/import.md): then it has no category, and its parts name theirs by id.
        var splits: [SplitPart]? = nil
    }

    private enum Source: Sendable {
        case csv([UInt8])
        case json([JSONValue])
    }

    private let source: Source
    let format: StatementFormat

    init(csv bytes: [UInt8], format: StatementFormat) {
        source = .csv(bytes)
        self.format = format
    }

    init(json elements: [JSONValue], format: StatementFormat) {
        source = .json(elements)
        self.format = format
    }

    /// Calls `body` with every valid row in the file's order, and answers the errors of the invalid ones
    /// (empty when there are none). Once a row is invalid, later valid rows are only checked, not passed
    /// on: nothing of an invalid statement is imported.
    func forEachRow(_ body: (Row) throws -> Void) rethrows -> StatementErrors {
        var reading = Reading(format: format)
        switch source {
        case .csv(let bytes): try reading.readCSV(bytes, body)
        case .json(let elements): try reading.readJSON(elements, body)
        }
        return reading.errors
    }
}

/// One pass over a statement: the errors so far, and how many rows had each (date, amount) without an
/// import id, the `n` of derived ones (`csv:<date>:<amount in cents>:<n>`).
private struct Reading {
    let format: StatementFormat
    var errors = StatementErrors()
    private var occurrences: [Occurrence: Int32] = [:]

    /// A day and an amount; `YYYY-MM-DD` is a small string, held inline, so a key allocates nothing.
    private struct Occurrence: Hashable {
        var day: String
        var cents: Int64
    }

    /// Members a row may have beside the transaction's: `category` names one by id or title.
    private static let categoryMembers: Set<String> = ["category", "categoryId"]
    /// The least an outflow or inflow cell may hold: the column, not a sign, says which way money went.
    private static let zero = Money(cents: 0)

    init(format: StatementFormat) {
        self.format = format
    }

    mutating func readCSV(_ bytes: [UInt8], _ body: (StatementRows.Row) throws -> Void) rethrows {
        var reader = CSVReader(bytes, delimiter: format.delimiter)
        let header: CSVReader.Record
        let columns: [(index: Int, member: String)]
        do throws(CSVReader.Failure) {
            guard let first = try reader.next() else {
                errors.add(line: 1, column: "", "the statement is empty; its first line must name the columns")
                return
            }
            header = first
        } catch {
            errors.add(line: error.line, column: "", error.message)
            return
        }
        do throws(StatementErrors) {
            columns = try format.columns(ofHeader: header.cells).sorted { $0.key < $1.key }.map { (index: $0.key, member: $0.value) }
        } catch {
            errors = error
            return
        }
        // Outflow and inflow columns give the bank's signed amount whatever `?amounts=` says.
        let readsFlows = columns.contains { $0.member == "outflow" }
        let sense = readsFlows ? .bank : format.sense(isCSV: true)
        while true {
            let record: CSVReader.Record
            do throws(CSVReader.Failure) {
                guard let next = try reader.next() else { return }
                record = next
            } catch {
                errors.add(line: error.line, column: "", error.message)
                return
            }
            guard record.cells.count == header.cells.count else {
                errors.add(line: record.line, column: "", "the row has \(record.cells.count) cells where the header has \(header.cells.count)")
                continue
            }
            var members = JSONObject()
            var reported: Set<String> = []
            for (index, member) in columns {
                switch cellValue(CSVText.undefused(record.cells[index]), member: member) {
                case .success(let value?): members[member] = value
                case .success(nil): break
                case .failure(let error):
                    errors.add(line: record.line, column: member, error.message)
                    reported.insert(member)
                }
            }
            if readsFlows {
                members["amount"] = flowAmount(&members, line: record.line, reported: &reported).map { .string($0.description) }
            }
            try validate(members, line: record.line, sense: sense, reported: reported, body)
        }
    }

    /// The bank's signed amount of a row written in outflow and inflow columns (money out negative), taking
    /// both members out of `members`; nil after recording why there is none. A cell holding 0 counts as empty
    /// when the other is filled, as some banks write `0.00` in the column a row does not use.
    private mutating func flowAmount(_ members: inout JSONObject, line: Int, reported: inout Set<String>) -> Money? {
        var reader = FieldReader(members)
        let outflow = reader.money("outflow", minimum: Self.zero)
        let inflow = reader.money("inflow", minimum: Self.zero)
        for name in StatementFormat.flowMembers { members[name] = nil }
        for error in reader.errors where !reported.contains(error.field) {
            errors.add(line: line, column: error.field, error.message)
            reported.insert(error.field)
        }
        // The row's `amount` is made here, so any fault of it is one of these two columns', named above.
        reported.insert("amount")
        guard reader.errors.isEmpty, !reported.contains("outflow"), !reported.contains("inflow") else { return nil }
        switch (outflow, inflow) {
        case (let out?, let into?) where out != Self.zero && into != Self.zero:
            errors.add(line: line, column: "outflow", "and inflow are both filled: a row is money out or money in, not both")
            return nil
        case (let out?, let into?):
            return out == Self.zero ? into : -out
        case (let out?, nil):
            return -out
        case (nil, let into?):
            return into
        case (nil, nil):
            errors.add(line: line, column: "outflow", "and inflow are both empty: one of them holds the row's amount")
            return nil
        }
    }

    mutating func readJSON(_ elements: [JSONValue], _ body: (StatementRows.Row) throws -> Void) rethrows {
        for (index, element) in elements.enumerated() {
            guard case .object(let members) = element else {
                errors.add(line: index + 1, column: "", "must be a transaction object, not \(element.typeName)")
                continue
            }
            try validate(members, line: index + 1, sense: format.sense(isCSV: false), reported: [], body)
        }
    }

    /// Why a cell is invalid.
    struct CellError: Error {
        let message: String
    }

    /// One cell as the JSON value a transaction body would carry, or why it cannot be one; nil for an empty
    /// optional cell. Dates and amounts are rewritten from the statement's format to ours.
    private func cellValue(_ cell: String, member: String) -> Result<JSONValue?, CellError> {
        switch member {
        case "date":
            guard let day = format.day(cell) else { return .failure(CellError(message: "must be a date written \(format.dateFormat.pattern)")) }
            return .success(.string(day))
        case "outflow" where cell.trimmed.isEmpty, "inflow" where cell.trimmed.isEmpty:
            return .success(nil)
        case "amount", "outflow", "inflow":
            guard let text = format.amountText(cell) else {
                // Outflow and inflow cells are never negative: their example has no sign.
                let sign = member == "amount" ? "-" : ""
                let example = sign + (format.decimalSeparator == UInt8(ascii: ",") ? "1.234,56" : "1234.56")
                return .failure(CellError(message: "must be an amount such as \(example)"))
            }
            return .success(.string(text))
        case "category":
            // Matched against titles, so the spaces a spreadsheet leaves around a cell do not count.
            let name = cell.trimmed
            return .success(name.isEmpty ? nil : .string(name))
        case "note", "payee", "importId":
            return .success(cell.isEmpty ? nil : .string(cell))
        default:
            return .success(.string(cell))
        }
    }

    /// Validates one row as a transaction body and passes it on, or records its errors; the `reported`
    /// members were found invalid already and left out. `sense` says how the row's `amount` counts money.
    private mutating func validate(
        _ row: JSONObject, line: Int, sense: StatementFormat.AmountSense, reported: Set<String>,
        _ body: (StatementRows.Row) throws -> Void
    ) rethrows {
        var members = row
        let category: StatementRows.CategoryReference?
        // A split's parts name their categories (by id); the row names none.
        let isSplit = members["splits"] != nil && members["splits"] != .null
        if isSplit {
            category = nil
            if format.categoryID != nil {
                errors.add(line: line, column: "splits", "cannot be imported with ?category=, which gives every row one category")
            }
            for name in Self.categoryMembers where members[name] != nil && members[name] != .null {
                errors.add(line: line, column: name, "must be absent or null on a split: each of its parts names its category")
            }
        } else if let id = format.categoryID {
            category = .id(id)
        } else {
            category = categoryReference(members, line: line)
        }
        for name in Self.categoryMembers { members[name] = nil }
        // The category is resolved later; 1 stands in for it so that the fields read as a complete body.
        let fields: TransactionFields
        do {
            fields = try TransactionFields(members, mode: .complete, categoryIDFromPath: isSplit ? nil : 1)
        } catch APIError.invalidFields(let invalid) {
            for field in invalid where !reported.contains(field.field) { errors.add(line: line, column: field.field, field.message) }
            return
        } catch {
            preconditionFailure("TransactionFields throws only invalidFields")
        }
        guard let day = fields.date else {
            if !reported.contains("date") { errors.add(line: line, column: "date", "is required") }
            return
        }
        if fields.accountID != nil, !reported.contains("accountId") {
            // A statement is one account's: rows name none of their own.
            errors.add(line: line, column: "accountId", "is the statement's, not a row's: /accounts/{id}/transactions/import or ?accountId= names it")
        }
        guard category != nil || format.accountID != nil || isSplit, let title = fields.title, let written = fields.amount, errors.isEmpty else {
            return
        }
        let importID: String
        if case .some(.some(let given)) = fields.importID {
            importID = given
        } else {
            // The amount as the file writes it, whatever the sense: the ids of rows imported before statements
            // were read in the bank's sense stay the same, and so do their duplicates (docs/import.md).
            let occurrence = Occurrence(day: day, cents: written.cents)
            let n = occurrences[occurrence, default: 0] + 1
            occurrences[occurrence] = n
            importID = "csv:\(day):\(written.cents):\(n)"
        }
        let amount = sense == .bank ? -written : written
        let note: String? = if case .some(.some(let text)) = fields.note { text } else { nil }
        let payee: String? = if case .some(.some(let text)) = fields.payee { text } else { nil }
        var splits = fields.splitParts
        if sense == .bank, let parts = splits {
            splits = parts.map { part in SplitPart(id: part.id, categoryID: part.categoryID, amount: -part.amount, note: part.note) }
        }
        try body(
            StatementRows.Row(
                line: line, category: category, title: title, amount: amount, day: day, note: note, payee: payee, importID: importID,
                splits: splits))
    }

    private mutating func categoryReference(_ members: JSONObject, line: Int) -> StatementRows.CategoryReference? {
        switch (members["categoryId"], members["category"]) {
        case (.number(let text)?, _):
            if let id = Int64(text), id > 0 { return .id(id) }
        case (nil, .string(let text)?), (nil, .number(let text)?):
            return .name(text)
        case (nil, nil):
            // An account's statement may leave a row's category empty: money in is income, money out uncategorised.
            if format.accountID != nil { return nil }
            errors.add(line: line, column: "category", "is required: a category's id or title (or ?category= for every row)")
            return nil
        default:
            break
        }
        errors.add(line: line, column: members["categoryId"] == nil ? "category" : "categoryId", "must be a category's id or title")
        return nil
    }
}
