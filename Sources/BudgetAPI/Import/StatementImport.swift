import HTTPServer
import JSONText
import Postgres

/// `POST /transactions/import`: a bank statement, as CSV or a JSON array, imported in one transaction; rows
/// whose import id exists already are skipped, so overlapping statements create each row once (docs/import.md).
struct StatementImport: Sendable {
    static let path = "/transactions/import"
    /// A year of a busy account's statement is a few megabytes; every other route keeps the 1 MiB limit.
    static let maxBodyBytes = 16 * 1024 * 1024
    static let csv = "text/csv"

    /// An account's statement: the same import, its rows in the path's account (docs/accounts.md).
    static let accountPath = "/accounts/:id/transactions/import"

    func register(in router: inout Router<Database>) {
        router.post(Self.path) { request, database in try await respond(to: request, database: database) }
        router.post(Self.accountPath) { request, database in
            let accountID = try recordID(request)
            var format = try StatementFormat(query: request.query)
            if let named = format.accountID, named != accountID {
                throw APIError.invalidParameter("accountId", "must be the account in the path (\(accountID)) when given")
            }
            format.accountID = accountID
            return try await respond(to: request, format: format, database: database) {
                throw APIError.notFound(resource: Accounts.recordName, id: accountID)
            }
        }
    }

    func respond(to request: Request, database: Database) async throws -> Response {
        try await respond(to: request, format: try StatementFormat(query: request.query), database: database) {
            throw APIError.invalidFields([.init(field: "accountId", message: "no account has this id")])
        }
    }

    /// Imports the statement; `missingAccount` throws what a missing account is on this route (the path's 404,
    /// the parameter's 422), checked before anything is read so that a dry run answers it too.
    private func respond(
        to request: Request, format: StatementFormat, database: Database, missingAccount: () throws -> Void
    ) async throws -> Response {
        let rows = try Self.rows(of: request, format: format)
        // First pass: every row valid, and the categories they name.
        var categories = CategoryReferences()
        var count = 0
        let errors = rows.forEachRow { row in
            count += 1
            if let category = row.category { categories.insert(category) }
            for part in row.splits ?? [] { categories.insert(.id(part.categoryID)) }
        }
        guard errors.isEmpty else { throw errors }
        if let accountID = format.accountID,
            try await !database.query("SELECT \(AccountQueries.exists(id: accountID, in: database.ledger))")[0].decode(Bool.self, at: 0)
        {
            try missingAccount()
        }
        guard count > 0 else { return ImportOutcome(isDryRun: rows.format.isDryRun).response }
        let resolved = categories.isEmpty ? ResolvedCategories(ids: []) : try await CategoryNames.resolve(categories, database: database)
        if resolved.missing > 0 { throw Self.missingCategories(rows, resolved) }
        let named = categories
        // Second pass: the rows in batches, written in one transaction (a dry run only asks which exist).
        let outcome = try await database.transaction { connection in
            var outcome = ImportOutcome(isDryRun: rows.format.isDryRun)
            var batch = ImportBatch()
            let run = { (batch: ImportBatch, outcome: inout ImportOutcome) throws in
                if outcome.isDryRun {
                    try outcome.add(
                        batch,
                        existing: connection.query(
                            ImportQueries.existing(batch.importIDs, account: format.accountID, in: database.ledger)))
                } else {
                    try outcome.add(batch, inserted: connection.query(ImportQueries.insert(batch, account: format.accountID, in: database.ledger)))
                }
            }
            _ = try rows.forEachRow { row in
                if let parts = row.splits {
                    // A split and its parts are one statement of their own (migrations/0019 checks the sum
                    // when it ends), in the file's order among the batches.
                    if batch.count > 0 { try run(batch, &outcome) }
                    batch = ImportBatch()
                    var split = ImportBatch()
                    split.append(row, categoryID: nil)
                    if outcome.isDryRun {
                        try run(split, &outcome)
                    } else {
                        try outcome.add(
                            split, inserted: connection.query(ImportQueries.insert(row, parts: parts, account: format.accountID, in: database.ledger))
                        )
                    }
                    return
                }
                batch.append(row, categoryID: row.category.map { resolved.ids[named.index(of: $0)]! })
                if batch.count == ImportBatch.capacity {
                    try run(batch, &outcome)
                    batch = ImportBatch()
                }
            }
            if batch.count > 0 { try run(batch, &outcome) }
            return outcome
        }
        return outcome.response
    }

    /// The 422 for rows whose category matches none: a third pass, on this failure path only, names their lines.
    private static func missingCategories(_ rows: StatementRows, _ resolved: ResolvedCategories) -> StatementErrors {
        var errors = StatementErrors()
        var categories = CategoryReferences()
        _ = rows.forEachRow { row in
            for (index, part) in (row.splits ?? []).enumerated() {
                let reference = categories.insert(.id(part.categoryID))
                if resolved.ids[reference] == nil {
                    errors.add(line: row.line, column: "splits[\(index)].categoryId", "no category has the id \(part.categoryID)")
                }
            }
            guard let category = row.category else { return }
            let index = categories.insert(category)
            guard resolved.ids[index] == nil else { return }
            let message =
                switch category {
                case .id(let id): "no category has the id \(id)"
                case .name(let name): "no category has the id or title \(name.debugDescription)"
                }
            errors.add(line: row.line, column: "category", message)
        }
        return errors
    }

    /// The body's rows, read as its media type says (415 for any other).
    static func rows(of request: Request, format: StatementFormat) throws -> StatementRows {
        switch request.contentType {
        case csv?:
            if let charset = request.headers["Content-Type"]?.charset, charset != "utf-8", charset != "us-ascii" {
                throw APIError.unsupportedMediaType(received: "text/csv; charset=\(charset)", accepted: ["text/csv (UTF-8)", RequestBody.json])
            }
            guard !request.body.isEmpty else {
                throw APIError.malformedBody("the request body is empty; send the statement's CSV, its first line naming the columns")
            }
            return StatementRows(csv: request.body, format: format)
        case RequestBody.json?:
            guard case .array(let elements) = try RequestBody.parse(request) else {
                throw APIError.malformedBody("the body must be a JSON array of transaction objects")
            }
            return StatementRows(json: elements, format: format)
        default:
            throw APIError.unsupportedMediaType(received: request.contentType, accepted: [csv, RequestBody.json])
        }
    }
}

/// What an import answers: `{"created","duplicates","createdIds","duplicateImportIds"}`, in the file's order.
struct ImportOutcome: Sendable {
    private(set) var createdIDs: [Int64] = []
    /// In a dry run, which assigns no ids: the rows that would be created.
    private var wouldCreate = 0
    private(set) var duplicateImportIDs: [String] = []
    let isDryRun: Bool
    /// The import ids of a dry run's earlier batches that would be created, so that a later row with the same
    /// id counts as a duplicate, as the insert would find it.
    private var seen: Set<String> = []

    init(isDryRun: Bool) {
        self.isDryRun = isDryRun
    }

    /// A batch the INSERT answered (id, import_id) for: a row it did not answer was a duplicate, of a
    /// transaction already there or of an earlier row of the file.
    ///
    /// The answer comes in the order the rows were inserted, the batch's, so one walk pairs them; should it
    /// not, the rows are paired by import id instead.
    mutating func add(_ batch: ImportBatch, inserted: QueryResult) throws {
        var next = 0
        var walked: [Int64] = []
        var skipped: [String] = []
        for importID in batch.importIDs {
            if next < inserted.count, try inserted[next].decode(String.self, at: 1) == importID {
                walked.append(try inserted[next].decode(Int64.self, at: 0))
                next += 1
            } else {
                skipped.append(importID)
            }
        }
        guard next == inserted.count else { return try addUnordered(batch, inserted: inserted) }
        createdIDs += walked
        duplicateImportIDs += skipped
    }

    private mutating func addUnordered(_ batch: ImportBatch, inserted: QueryResult) throws {
        var created: [String: Int64] = [:]
        for row in inserted { created[try row.decode(String.self, at: 1)] = try row.decode(Int64.self, at: 0) }
        for importID in batch.importIDs {
            if let id = created.removeValue(forKey: importID) { createdIDs.append(id) } else { duplicateImportIDs.append(importID) }
        }
    }

    /// A dry run's batch, given the import ids of it that exist already.
    mutating func add(_ batch: ImportBatch, existing: QueryResult) throws {
        for row in existing { seen.insert(try row.decode(String.self, at: 0)) }
        for importID in batch.importIDs {
            if seen.insert(importID).inserted { wouldCreate += 1 } else { duplicateImportIDs.append(importID) }
        }
    }

    var created: Int { isDryRun ? wouldCreate : createdIDs.count }

    var response: Response {
        var body = Array("{\"created\":\(created),\"duplicates\":\(duplicateImportIDs.count),\"createdIds\":[".utf8)
        body.reserveCapacity(body.count + createdIDs.count * 8 + duplicateImportIDs.reduce(64) { $0 + $1.utf8.count + 3 })
        for (index, id) in createdIDs.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body += Array(String(id).utf8)
        }
        body += Array("],\"duplicateImportIds\":[".utf8)
        for (index, importID) in duplicateImportIDs.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            JSONQuoting.append(importID, to: &body)
        }
        body += Array((isDryRun ? "],\"dryRun\":true}" : "]}").utf8)
        return .json(body, status: created > 0 && !isDryRun ? .created : .ok)
    }
}

/// Up to `capacity` rows of a statement as the array parameters of one INSERT, each column one array literal.
struct ImportBatch: Sendable {
    /// Rows per statement: a few hundred kilobytes of parameters, however long the file (bench/import).
    static let capacity = 5000

    private(set) var count = 0
    private(set) var categoryIDs = PostgresArrayLiteral()
    private(set) var titles = PostgresArrayLiteral()
    private(set) var amounts = PostgresArrayLiteral()
    private(set) var days = PostgresArrayLiteral()
    private(set) var notes = PostgresArrayLiteral()
    private(set) var payees = PostgresArrayLiteral()
    private(set) var importIDLiteral = PostgresArrayLiteral()
    /// The rows' import ids in order, which the outcome pairs with what the INSERT answers.
    private(set) var importIDs: [String] = []

    mutating func append(_ row: StatementRows.Row, categoryID: Int64?) {
        count += 1
        if let categoryID { categoryIDs.append(String(categoryID)) } else { categoryIDs.appendNull() }
        titles.append(row.title)
        amounts.append(row.amount.description)
        days.append(row.day)
        if let note = row.note { notes.append(note) } else { notes.appendNull() }
        if let payee = row.payee { payees.append(payee) } else { payees.appendNull() }
        importIDLiteral.append(row.importID)
        importIDs.append(row.importID)
    }
}

/// The distinct categories a statement names, each with an index, in first-use order.
struct CategoryReferences: Sendable {
    private(set) var all: [StatementRows.CategoryReference] = []
    private var indexes: [StatementRows.CategoryReference: Int] = [:]

    var isEmpty: Bool { all.isEmpty }

    @discardableResult
    mutating func insert(_ reference: StatementRows.CategoryReference) -> Int {
        if let index = indexes[reference] { return index }
        all.append(reference)
        indexes[reference] = all.count - 1
        return all.count - 1
    }

    func index(of reference: StatementRows.CategoryReference) -> Int {
        indexes[reference]!
    }
}

/// The id of each of a statement's categories, by `CategoryReferences` index; nil where none matched.
struct ResolvedCategories: Sendable {
    let ids: [Int64?]
    var missing: Int { ids.count { $0 == nil } }
}

/// Category references of a statement (ids, or titles compared ignoring case) resolved to ids.
enum CategoryNames {
    /// The id each reference names, or nil where no category matches it. A cell that is a number names the
    /// category with that id when there is one, else the category with that title.
    static func resolve(_ references: CategoryReferences, database: Database) async throws -> ResolvedCategories {
        var ids: [Int64] = []
        var names: [String] = []
        for reference in references.all {
            switch reference {
            case .id(let id): ids.append(id)
            case .name(let name):
                if let id = Int64(name.trimmed) { ids.append(id) }
                names.append(name)
            }
        }
        var existing: Set<Int64> = []
        var byName: [String: Int64] = [:]
        for row in try await database.query(ImportQueries.categories(ids: ids, names: names, in: database.ledger)) {
            let id = try row.decode(Int64.self, at: 0)
            if let name = try row.decode(String?.self, at: 1) { byName[name] = id } else { existing.insert(id) }
        }
        return ResolvedCategories(
            ids: references.all.map { reference in
                switch reference {
                case .id(let id): existing.contains(id) ? id : nil
                case .name(let name): Int64(name.trimmed).flatMap { existing.contains($0) ? $0 : nil } ?? byName[name]
                }
            })
    }
}

/// The SQL of an import; `transactions_import_id_unique` (migrations/0018: per account) is what makes a row a
/// duplicate.
enum ImportQueries {
    /// Inserts a batch of rows, skipping those whose import id is taken: by a transaction already there, one a
    /// concurrent import is writing (the insert waits for it), or an earlier row of the same file; answers
    /// (id, import_id) of the rows it created. `unnest` yields the rows in the file's order, and the insert
    /// takes them (and their ids) in that order; no sort is asked for. An import's batches run in one
    /// transaction, so the file is written whole or not at all. An account's rows are cleared: the bank has
    /// them (docs/accounts.md).
    static func insert(_ batch: ImportBatch, account: Int64?, in ledger: LedgerID) -> Query {
        let cleared = account == nil ? "uncleared" : "cleared"
        return """
            INSERT INTO transactions (ledger_id, account_id, cleared, category_id, title, amount, date, note, payee, import_id)
            SELECT \(ledger), \(account)::bigint, \(cleared), category_id, title, amount, date, note, payee, import_id
            FROM unnest(\(batch.categoryIDs)::bigint[], \(batch.titles)::text[], \(batch.amounts)::numeric[], \(batch.days)::date[],
                        \(batch.notes)::text[], \(batch.payees)::text[], \(batch.importIDLiteral)::text[])
                 AS row (category_id, title, amount, date, note, payee, import_id)
            ON CONFLICT (ledger_id, account_id, import_id) WHERE import_id IS NOT NULL DO NOTHING
            RETURNING id, import_id
            """
    }

    /// One split row and its parts, skipped as a duplicate as `insert` skips a row (its parts with it);
    /// answers (id, import_id) when it created it.
    static func insert(_ row: StatementRows.Row, parts: [SplitPart], account: Int64?, in ledger: LedgerID) -> Query {
        let cleared = account == nil ? "uncleared" : "cleared"
        return """
            WITH t AS (
                INSERT INTO transactions (ledger_id, account_id, cleared, title, amount, date, note, payee, import_id, split)
                VALUES (\(ledger), \(account)::bigint, \(cleared), \(row.title), \(row.amount), \(row.day)::date, \(row.note)::text,
                        \(row.payee)::text, \(row.importID), true)
                ON CONFLICT (ledger_id, account_id, import_id) WHERE import_id IS NOT NULL DO NOTHING
                RETURNING *),
            \(TransactionQueries.insertParts(parts))
            SELECT t.id, t.import_id FROM t
            """
    }

    /// The import ids among `importIDs` that a transaction of the ledger (in `account`, or in none) holds
    /// already: a dry run's duplicates.
    static func existing(_ importIDs: [String], account: Int64?, in ledger: LedgerID) -> Query {
        let inAccount: Query = account.map { "t.account_id = \($0)" } ?? "t.account_id IS NULL"
        return """
            SELECT t.import_id FROM transactions t
            WHERE \(Transactions.inLedger(ledger)) AND \(inAccount) AND t.import_id = ANY(\(importIDs)::text[])
            """
    }

    /// The categories with one of `ids` (name NULL), and those whose title equals one of `names` ignoring
    /// case, with the name as the statement wrote it.
    static func categories(ids: [Int64], names: [String], in ledger: LedgerID) -> Query {
        """
        SELECT c.id, NULL::text FROM categories c WHERE \(Categories.inLedger(ledger)) AND c.id = ANY(\(ids)::bigint[])
        UNION ALL
        SELECT c.id, n.name FROM unnest(\(names)::text[]) AS n (name)
        JOIN categories c ON \(Categories.inLedger(ledger)) AND lower(c.title) = lower(n.name)
        """
    }
}

extension String {
    /// The `charset` parameter of a media type such as `text/csv; charset=UTF-8`, lowercased; nil when absent.
    var charset: String? {
        for parameter in split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmed.lowercased() == "charset" {
                return pair[1].trimmed.lowercased().filter { $0 != "\"" }
            }
        }
        return nil
    }
}
