import HTTPServer
import Postgres

/// A bank statement's rows, validated, as the columns of the import's one INSERT (docs/import.md).
///
/// Each row is checked as a `POST /transactions` body is (`TransactionFields`), its errors named by line and
/// column; then its values go straight into the statement's array parameters, so the file is held once as
/// text, not again as one object per row.
struct StatementRows {
    /// How a row names its category, resolved against the database before the insert (`CategoryNames`).
    enum CategoryReference: Hashable {
        case id(Int64)
        /// A cell that is a category's id or, failing that, its title (compared ignoring case).
        case name(String)
    }

    private(set) var count = 0
    /// Per row: the line it came from, for the errors found once categories are resolved.
    private(set) var lines: [Int] = []
    /// Per row: an index into `categories`.
    private(set) var categoryIndexes: [Int32] = []
    /// The distinct category references, in first-use order.
    private(set) var categories: [CategoryReference] = []
    private var categoryIndex: [CategoryReference: Int32] = [:]
    private(set) var titles = PostgresArrayLiteral()
    private(set) var amounts = PostgresArrayLiteral()
    private(set) var dates = PostgresArrayLiteral()
    private(set) var notes = PostgresArrayLiteral()
    private(set) var importIDLiteral = PostgresArrayLiteral()
    /// Per row, in file order: what the answer's `createdIds` and `duplicateImportIds` are read against.
    private(set) var importIDs: [String] = []
    /// How many rows so far had each (date, amount) without an import id: the `n` of derived ones.
    private var occurrences: [Occurrence: Int] = [:]
    var errors = StatementErrors()

    private struct Occurrence: Hashable {
        var day: String
        var cents: Int64
    }

    /// The members a row may have beside the transaction's: `category`, which names one by id or title.
    private static let ignoredByFields: Set<String> = ["category", "categoryId"]

    /// Reads a CSV statement; a malformed file, or rows that are invalid, are collected in `errors`.
    init(csv bytes: [UInt8], format: StatementFormat) {
        var reader = CSVReader(bytes, delimiter: format.delimiter)
        do throws(CSVReader.Failure) {
            guard let header = try reader.next() else {
                errors.add(line: 1, column: "", "the statement is empty; its first line must name the columns")
                return
            }
            let columns: [Int: String]
            do {
                columns = try format.columns(ofHeader: header.cells)
            } catch {
                errors = error
                return
            }
            while let record = try reader.next() {
                if record.cells.count != header.cells.count {
                    errors.add(line: record.line, column: "", "the row has \(record.cells.count) cells where the header has \(header.cells.count)")
                    continue
                }
                var members = JSONObject()
                var reported: Set<String> = []
                for (index, member) in columns {
                    let cell = Self.undefused(record.cells[index])
                    guard let value = csvValue(cell, member: member, format: format) else { continue }
                    guard case .success(let json) = value else {
                        if case .failure(let error) = value { errors.add(line: record.line, column: member, error.message) }
                        reported.insert(member)
                        continue
                    }
                    members[member] = json
                }
                append(members, line: record.line, format: format, reported: reported)
            }
        } catch {
            errors.add(line: error.line, column: "", error.message)
        }
    }

    /// Reads a JSON statement: an array of transaction objects, each a line counted from 1.
    init(json elements: [JSONValue], format: StatementFormat) {
        for (index, element) in elements.enumerated() {
            guard case .object(let members) = element else {
                errors.add(line: index + 1, column: "", "must be a transaction object, not \(element.typeName)")
                continue
            }
            append(members, line: index + 1, format: format, reported: [])
        }
    }

    /// One cell as the JSON value a transaction body would carry, or why it cannot be one; `nil` for an empty
    /// optional cell. Dates and amounts are rewritten from the statement's format to ours.
    private func csvValue(_ cell: String, member: String, format: StatementFormat) -> Result<JSONValue, CellError>? {
        switch member {
        case "date":
            guard let day = format.day(cell) else { return .failure(CellError("must be a date written \(format.dateFormat.pattern)")) }
            return .success(.string(day))
        case "amount":
            guard let text = format.amountText(cell) else {
                return .failure(CellError("must be an amount such as \(format.decimalSeparator == UInt8(ascii: ",") ? "-1.234,56" : "-1234.56")"))
            }
            return .success(.string(text))
        case "note", "importId", "category":
            return cell.isEmpty ? nil : .success(.string(cell))
        default:
            return .success(.string(cell))
        }
    }

    /// Why a cell is invalid.
    struct CellError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Validates one row as a transaction body and appends it, or records its errors; the `reported` members
    /// were found invalid already and left out.
    private mutating func append(_ row: JSONObject, line: Int, format: StatementFormat, reported: Set<String>) {
        var members = row
        let category: CategoryReference?
        if let id = format.categoryID {
            category = .id(id)
        } else {
            category = categoryReference(members, line: line)
        }
        for name in Self.ignoredByFields { members[name] = nil }
        // The category is resolved later; 1 stands in for it so that the fields read as a complete body.
        let fields: TransactionFields
        do {
            fields = try TransactionFields(members, mode: .complete, categoryIDFromPath: 1)
        } catch APIError.invalidFields(let invalid) {
            for field in invalid where !reported.contains(field.field) { errors.add(line: line, column: field.field, field.message) }
            return
        } catch {
            preconditionFailure("TransactionFields throws only invalidFields")
        }
        guard let date = fields.date else {
            if !reported.contains("date") { errors.add(line: line, column: "date", "is required") }
            return
        }
        guard let category, let title = fields.title, let amount = fields.amount, errors.isEmpty else { return }
        let importID: String
        if case .some(.some(let given)) = fields.importID {
            importID = given
        } else {
            let occurrence = Occurrence(day: date, cents: amount.cents)
            let n = occurrences[occurrence, default: 0] + 1
            occurrences[occurrence] = n
            importID = "csv:\(date):\(amount.cents):\(n)"
        }
        count += 1
        lines.append(line)
        categoryIndexes.append(index(of: category))
        titles.append(title)
        amounts.append(amount.description)
        dates.append(date)
        if case .some(.some(let note)) = fields.note { notes.append(note) } else { notes.appendNull() }
        importIDLiteral.append(importID)
        importIDs.append(importID)
    }

    private mutating func categoryReference(_ members: JSONObject, line: Int) -> CategoryReference? {
        switch (members["categoryId"], members["category"]) {
        case (.number(let text)?, _):
            guard let id = Int64(text), id > 0 else { break }
            return .id(id)
        case (nil, .string(let text)?):
            return .name(text)
        case (nil, .number(let text)?):
            return .name(text)
        case (nil, nil):
            errors.add(line: line, column: "category", "is required: a category's id or title (or ?category= for every row)")
            return nil
        default:
            break
        }
        errors.add(line: line, column: members["categoryId"] == nil ? "category" : "categoryId", "must be a category's id or title")
        return nil
    }

    private mutating func index(of category: CategoryReference) -> Int32 {
        if let index = categoryIndex[category] { return index }
        let index = Int32(categories.count)
        categories.append(category)
        categoryIndex[category] = index
        return index
    }

    /// The category id of every row, from the ids `resolved` found for `categories`; a row whose category
    /// does not exist is an error of its line.
    mutating func categoryIDs(resolved: [Int64?]) -> PostgresArrayLiteral {
        var ids = PostgresArrayLiteral()
        for (row, index) in categoryIndexes.enumerated() {
            guard let id = resolved[Int(index)] else {
                let message = switch categories[Int(index)] {
                case .id(let id): "no category has the id \(id)"
                case .name(let name): "no category has the id or title \(name.debugDescription)"
                }
                errors.add(line: lines[row], column: "category", message)
                continue
            }
            ids.append(String(id))
        }
        return ids
    }

    /// A cell as the file meant it: a `'` that an export put before `=`, `+`, `-`, `@`, a tab or a carriage
    /// return, so that spreadsheets read it as text (docs/import.md, Formula cells), is dropped.
    static func undefused(_ cell: String) -> String {
        let utf8 = cell.utf8
        guard utf8.count >= 2, utf8.first == UInt8(ascii: "'"),
              CSVText.formulaTriggers.contains(utf8[utf8.index(after: utf8.startIndex)])
        else { return cell }
        return String(cell.dropFirst())
    }
}
