import BudgetCore
import HTTPServer
import JSONText

/// How a bank statement is written, from the import's query parameters (docs/import.md): which header names
/// the columns have, the delimiter, and how dates and amounts are written.
struct StatementFormat: Sendable, Equatable {
    /// The members a statement's columns can fill, by the name an exported file's header gives them.
    static let memberNames = ["date", "amount", "outflow", "inflow", "title", "category", "note", "payee", "importId"]
    /// The columns a statement must have; `category` too unless `?category=` names one for every row or the
    /// statement is an account's, and either `amount` or both `outflow` and `inflow`.
    static let requiredMembers = ["date", "title"]
    /// The two columns some banks write in place of one signed amount, both positive (docs/import.md).
    static let flowMembers = ["outflow", "inflow"]

    /// Which way a statement's `amount` column counts money (docs/import.md, "Money out, money in").
    enum AmountSense: String, Sendable {
        /// A bank's: money out is negative, money in positive. What bank statements are written in.
        case bank
        /// This API's `amount`: money spent is positive, a refund negative. What a CSV export of ours writes.
        case budget
    }

    /// The header name (lowercased) that fills each member, `?columns=` applied.
    var headerNames: [String: String]
    var delimiter: UInt8 = UInt8(ascii: ",")
    var dateFormat = DateFormat.iso
    /// `,` when amounts are written `-12,50` or `1.234,56`.
    var decimalSeparator: UInt8 = UInt8(ascii: ".")
    /// `?category=`: every row's category, in place of a column.
    var categoryID: Int64?
    /// The account the statement is of (`?accountId=`, or the path of `/accounts/:id/transactions/import`):
    /// its rows go into it, cleared, and may have no category (docs/accounts.md).
    var accountID: Int64?
    var isDryRun = false
    /// `?amounts=`; nil when not given: a CSV statement is then read in the bank's sense, a JSON one, whose rows
    /// are transaction bodies, in the API's (`sense(isCSV:)`).
    var amountSense: AmountSense?
    /// `?columns=` named `outflow` or `inflow`: read those two columns, never an `amount` column.
    private var namesFlowColumns = false

    /// The parameters this route reads; any other is refused, as a misspelt one would silently change nothing.
    static let parameterNames: Set<String> = ["columns", "delimiter", "dateFormat", "decimal", "category", "accountId", "dryRun", "amounts"]

    init(query: [(name: String, value: String)]) throws {
        headerNames = Dictionary(uniqueKeysWithValues: Self.memberNames.map { ($0, $0.lowercased()) })
        var seen: Set<String> = []
        // Names starting with `_` are the server's own, such as `_delay` (docs/json-server.md).
        for (name, value) in query where !name.hasPrefix("_") {
            guard Self.parameterNames.contains(name) else {
                throw APIError.invalidParameter(
                    name, "is not a parameter of an import; known: \(Self.parameterNames.sorted().joined(separator: ", "))")
            }
            guard seen.insert(name).inserted else { throw APIError.invalidParameter(name, "is given twice") }
            switch name {
            case "columns": try readColumns(value)
            case "delimiter":
                guard value.utf8.count == 1, let byte = value.utf8.first, byte != UInt8(ascii: "\""), byte != 13, byte != 10 else {
                    throw APIError.invalidParameter(name, "must be one character other than a quote or a line break, e.g. ; or %09 for a tab")
                }
                delimiter = byte
            case "dateFormat":
                guard let format = DateFormat(value) else {
                    throw APIError.invalidParameter(name, "must be a pattern of DD, MM and YYYY with separators, e.g. DD.MM.YYYY or MM/DD/YYYY")
                }
                dateFormat = format
            case "decimal":
                guard value == "." || value == "," else { throw APIError.invalidParameter(name, "must be . or ,") }
                decimalSeparator = value.utf8.first!
            case "category":
                guard let id = Int64(value), id > 0 else { throw APIError.invalidParameter(name, "must be a category id") }
                categoryID = id
            case "accountId":
                guard let id = Int64(value), id > 0 else { throw APIError.invalidParameter(name, "must be an account id") }
                accountID = id
            case "dryRun":
                guard value == "true" || value == "false" else { throw APIError.invalidParameter(name, "must be true or false") }
                isDryRun = value == "true"
            case "amounts":
                guard let sense = AmountSense(rawValue: value) else {
                    throw APIError.invalidParameter(
                        name,
                        "must be bank (money out is negative, as banks write it) or budget (money spent is positive, as this API and its CSV export write it)"
                    )
                }
                amountSense = sense
            default:
                preconditionFailure("a parameter in parameterNames without a case")
            }
        }
    }

    /// `date:Buchungstag,amount:Betrag`: the file's header name for each member named.
    private mutating func readColumns(_ value: String) throws {
        for pair in value.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let member = Self.memberNames.first(where: { $0.lowercased() == parts[0].lowercased() }),
                !parts[1].trimmed.isEmpty
            else {
                throw APIError.invalidParameter(
                    "columns",
                    "must list member:Header pairs separated by commas, e.g. date:Buchungstag,amount:Betrag; members are \(Self.memberNames.joined(separator: ", "))"
                )
            }
            headerNames[member] = parts[1].trimmed.lowercased()
            namesFlowColumns = namesFlowColumns || Self.flowMembers.contains(member)
        }
        if namesFlowColumns, value.split(separator: ",").contains(where: { $0.lowercased().hasPrefix("amount:") }) {
            throw APIError.invalidParameter(
                "columns", "names amount and outflow or inflow: a statement has one signed amount column or an outflow and an inflow column")
        }
    }

    /// How the `amount` of a statement's rows counts money: as `?amounts=` says, else as a bank writes it in
    /// CSV and as this API writes it in JSON. Outflow and inflow columns say the direction themselves.
    func sense(isCSV: Bool) -> AmountSense {
        amountSense ?? (isCSV ? .bank : .budget)
    }

    /// The members the columns of a header row fill, by column index; throws the missing ones (line 1).
    func columns(ofHeader header: [String]) throws(StatementErrors) -> [Int: String] {
        var columns: [Int: String] = [:]
        let names = header.map { $0.trimmed.lowercased() }
        for member in Self.memberNames {
            if let index = names.firstIndex(of: headerNames[member]!) { columns[index] = member }
        }
        // One signed amount column, or an outflow and an inflow column: those named by `?columns=`, else the
        // amount column when the header has one, else outflow and inflow. The other form's columns are ignored.
        let hasAmount = columns.values.contains("amount")
        let readsFlows = namesFlowColumns || (!hasAmount && columns.values.contains { Self.flowMembers.contains($0) })
        let ignored = readsFlows ? ["amount"] : Self.flowMembers
        columns = columns.filter { !ignored.contains($0.value) }
        var missing = Self.requiredMembers + (readsFlows ? Self.flowMembers : ["amount"])
        if categoryID == nil, accountID == nil { missing.append("category") }
        missing.removeAll { member in columns.values.contains(member) }
        guard missing.isEmpty else {
            var errors = StatementErrors()
            for member in missing {
                let header = headerNames[member]!
                let alternative = member == "amount" ? " (nor \"outflow\" and \"inflow\" columns)" : ""
                errors.add(
                    line: 1, column: member, "the header has no column \"\(header)\"" + (header == member ? alternative : " (named by ?columns=)"))
            }
            throw errors
        }
        return columns
    }

    /// A `date` cell as `YYYY-MM-DD`, or nil when it is not a date in this format.
    func day(_ cell: String) -> String? {
        dateFormat.isoDay(cell.trimmed)
    }

    /// An `amount` cell as the decimal text `Money` reads (`-1234.56`), or nil when it is not an amount.
    ///
    /// With `,` as the decimal separator, `.` groups thousands (`1.234,56`); a cell with no `,` is read with
    /// `.` as a decimal point unless every `.` is followed by exactly three digits (`1.234` is 1234, `-12.50`
    /// stays -12.50).
    func amountText(_ cell: String) -> String? {
        let text = cell.trimmed
        guard !text.isEmpty else { return nil }
        guard decimalSeparator == UInt8(ascii: ",") else { return text }
        let groups = text.split(separator: ".", omittingEmptySubsequences: false)
        let afterDots = groups.dropFirst()
        // `234` or, last, `234,56`: three digits after each dot, then the end or (last) the decimal comma.
        func groupsThousands(_ group: Substring, isLast: Bool) -> Bool {
            group.prefix { $0.isASCIIDigit }.count == 3 && (group.count == 3 || (isLast && group.dropFirst(3).first == ","))
        }
        let dotsGroupThousands =
            !afterDots.isEmpty
            && afterDots.enumerated().allSatisfy { index, group in groupsThousands(group, isLast: index == afterDots.count - 1) }
        if text.contains(",") {
            guard afterDots.isEmpty || dotsGroupThousands else { return nil }
            return String(groups.joined().map { $0 == "," ? "." : $0 })
        }
        return dotsGroupThousands ? groups.joined() : text
    }
}

/// A date pattern such as `DD.MM.YYYY`: `DD`, `MM` and `YYYY` once each, between separators.
struct DateFormat: Sendable, Equatable {
    static let iso = DateFormat("YYYY-MM-DD")!

    private enum Piece: Equatable { case day, month, year, literal(Character) }
    private let pieces: [Piece]
    /// As given, e.g. `DD.MM.YYYY`.
    let pattern: String

    init?(_ pattern: String) {
        self.pattern = pattern
        var pieces: [Piece] = []
        var rest = Substring(pattern)
        while let first = rest.first {
            if rest.hasPrefix("YYYY") {
                pieces.append(.year)
                rest = rest.dropFirst(4)
            } else if rest.hasPrefix("MM") {
                pieces.append(.month)
                rest = rest.dropFirst(2)
            } else if rest.hasPrefix("DD") {
                pieces.append(.day)
                rest = rest.dropFirst(2)
            } else if !first.isLetter, !first.isNumber {
                pieces.append(.literal(first))
                rest = rest.dropFirst()
            } else {
                return nil
            }
        }
        for piece in [Piece.day, .month, .year] where pieces.filter({ $0 == piece }).count != 1 { return nil }
        self.pieces = pieces
    }

    /// `cell` as `YYYY-MM-DD`, checked for a real date; days and months may have one digit.
    func isoDay(_ cell: String) -> String? {
        if self == .iso, CalendarDay(cell) != nil { return cell }
        var (year, month, day) = ("", "", "")
        var rest = Substring(cell)
        for piece in pieces {
            switch piece {
            case .literal(let character):
                guard rest.first == character else { return nil }
                rest = rest.dropFirst()
            case .year, .month, .day:
                let digits = rest.prefix { $0.isASCIIDigit }
                rest = rest.dropFirst(digits.count)
                switch piece {
                case .year: guard digits.count == 4 else { return nil }; year = String(digits)
                case .month:
                    guard (1...2).contains(digits.count) else { return nil }; month = String(repeating: "0", count: 2 - digits.count) + digits
                default: guard (1...2).contains(digits.count) else { return nil }; day = String(repeating: "0", count: 2 - digits.count) + digits
                }
            }
        }
        guard rest.isEmpty else { return nil }
        let iso = "\(year)-\(month)-\(day)"
        return CalendarDay(iso) == nil ? nil : iso
    }
}

/// The invalid cells of a statement, each by line and column (docs/import.md): the 422's `errors`.
struct StatementErrors: Error, Sendable {
    struct Entry: Sendable, Equatable {
        var line: Int
        var column: String
        var message: String
    }

    /// The most entries one answer lists; `count` still counts them all.
    static let listed = 1000

    private(set) var entries: [Entry] = []
    private(set) var count = 0
    var isEmpty: Bool { count == 0 }

    mutating func add(line: Int, column: String, _ message: String) {
        count += 1
        if entries.count < Self.listed { entries.append(Entry(line: line, column: column, message: message)) }
    }
}

extension StatementErrors: ProblemConvertible {
    var problem: Problem {
        let listed = count > entries.count ? " (the first \(entries.count) are listed)" : ""
        let detail = "the statement has \(count) invalid cell\(count == 1 ? "" : "s")\(listed); nothing was imported"
        var problem = Problem(.unprocessableContent, detail: detail)
        let items = entries.map { entry in
            "{\"line\":\(entry.line),\"column\":\(entry.column.jsonQuoted),\"message\":\(entry.message.jsonQuoted)}"
        }
        problem.extensions.append((name: "errors", json: "[\(items.joined(separator: ","))]"))
        return problem
    }
}

extension StringProtocol {
    /// Without the spaces and tabs around it.
    var trimmed: String {
        let isBlank = { (character: Character) in character == " " || character == "\t" }
        let rest = drop(while: isBlank)
        var end = rest.endIndex
        while end > rest.startIndex, isBlank(rest[rest.index(before: end)]) { end = rest.index(before: end) }
        return String(rest[..<end])
    }
}

extension Character {
    /// `0` to `9` only; `isNumber` would also take other scripts' digits, and asks Unicode's tables to.
    var isASCIIDigit: Bool { asciiValue.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }
}
