import HTTPServer
import JSONText
import Postgres

/// `POST /transactions/import`: a bank statement, as CSV or a JSON array, imported in one statement; rows
/// whose import id exists already are skipped, so overlapping statements create each row once (docs/import.md).
struct StatementImport: Sendable {
    static let path = "/transactions/import"
    /// A year of a busy account's statement is a few megabytes; every other route keeps the 1 MiB limit.
    static let maxBodyBytes = 16 * 1024 * 1024
    static let csv = "text/csv"

    func register(in router: inout Router<Database>) {
        router.post(Self.path) { request, database in try await respond(to: request, database: database) }
    }

    func respond(to request: Request, database: Database) async throws -> Response {
        let format = try StatementFormat(query: request.query)
        var rows = try Self.rows(of: request, format: format)
        guard rows.errors.isEmpty else { throw rows.errors }
        guard rows.count > 0 else { return ImportOutcome(dryRun: format.isDryRun).response }
        let categoryIDs = rows.categoryIDs(resolved: try await CategoryNames.resolve(rows.categories, database: database))
        guard rows.errors.isEmpty else { throw rows.errors }
        if format.isDryRun {
            return try ImportOutcome(dryRun: rows, existing: await database.query(ImportQueries.existing(rows.importIDs))).response
        }
        return try ImportOutcome(rows, inserted: await database.query(ImportQueries.insert(rows, categoryIDs: categoryIDs))).response
    }

    /// The body's rows, read as its media type says (415 for any other).
    static func rows(of request: Request, format: StatementFormat) throws -> StatementRows {
        switch request.contentType {
        case csv?:
            if let charset = request.headers["Content-Type"]?.charset, charset != "utf-8", charset != "us-ascii" {
                throw APIError.unsupportedMediaType(received: "text/csv; charset=\(charset)", accepted: ["text/csv (UTF-8)", RequestBody.json])
            }
            guard !request.body.isEmpty else { throw APIError.malformedBody("the request body is empty; send the statement's CSV, its first line naming the columns") }
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
struct ImportOutcome {
    var createdIDs: [Int64] = []
    /// The rows that would be created by a dry run, which assigns no ids.
    var wouldCreate = 0
    var duplicateImportIDs: [String] = []
    var isDryRun = false

    init(dryRun: Bool) {
        isDryRun = dryRun
    }

    /// From the rows the INSERT answered (id, import_id): a row it did not answer was a duplicate, of a
    /// transaction already there or of an earlier row of the same file.
    init(_ rows: StatementRows, inserted: QueryResult) throws {
        var created: [String: Int64] = [:]
        created.reserveCapacity(inserted.count)
        for row in inserted { created[try row.decode(String.self, at: 1)] = try row.decode(Int64.self, at: 0) }
        for importID in rows.importIDs {
            if let id = created.removeValue(forKey: importID) { createdIDs.append(id) } else { duplicateImportIDs.append(importID) }
        }
    }

    /// From the import ids that exist already: every other row, the first time the file names it, would be created.
    init(dryRun rows: StatementRows, existing: QueryResult) throws {
        isDryRun = true
        var taken: Set<String> = []
        for row in existing { taken.insert(try row.decode(String.self, at: 0)) }
        for importID in rows.importIDs {
            if taken.insert(importID).inserted { wouldCreate += 1 } else { duplicateImportIDs.append(importID) }
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

/// Category references of a statement (ids, or titles compared ignoring case) resolved to ids.
enum CategoryNames {
    /// The id each reference names, or nil where no category matches it. A cell that is a number names the
    /// category with that id when there is one, else the category with that title.
    static func resolve(_ references: [StatementRows.CategoryReference], database: Database) async throws -> [Int64?] {
        var ids: [Int64] = []
        var names: [String] = []
        for reference in references {
            switch reference {
            case .id(let id): ids.append(id)
            case .name(let name):
                if let id = Int64(name.trimmed) { ids.append(id) }
                names.append(name)
            }
        }
        var existing: Set<Int64> = []
        var byName: [String: Int64] = [:]
        for row in try await database.query(ImportQueries.categories(ids: ids, names: names)) {
            let id = try row.decode(Int64.self, at: 0)
            if let name = try row.decode(String?.self, at: 1) { byName[name] = id } else { existing.insert(id) }
        }
        return references.map { reference in
            switch reference {
            case .id(let id): existing.contains(id) ? id : nil
            case .name(let name): Int64(name.trimmed).flatMap { existing.contains($0) ? $0 : nil } ?? byName[name]
            }
        }
    }
}

/// The SQL of an import; `transactions_import_id_unique` (migrations/0015) is what makes a row a duplicate.
enum ImportQueries {
    /// Inserts every row of the statement in one statement, skipping those whose import id is taken, by a
    /// transaction already there, one a concurrent import is writing (the insert waits for it), or an earlier
    /// row of the same file; answers (id, import_id) of the rows it created. `unnest` yields the rows in the
    /// file's order, and the insert takes them (and their ids) in that order; no sort is asked for.
    static func insert(_ rows: StatementRows, categoryIDs: PostgresArrayLiteral) -> Query {
        """
        INSERT INTO transactions (category_id, title, amount, date, note, import_id)
        SELECT category_id, title, amount, date, note, import_id
        FROM unnest(\(categoryIDs)::bigint[], \(rows.titles)::text[], \(rows.amounts)::numeric[], \(rows.dates)::date[],
                    \(rows.notes)::text[], \(rows.importIDLiteral)::text[])
             AS row (category_id, title, amount, date, note, import_id)
        ON CONFLICT (import_id) WHERE import_id IS NOT NULL DO NOTHING
        RETURNING id, import_id
        """
    }

    /// The import ids among `importIDs` that a transaction holds already (a dry run's duplicates).
    static func existing(_ importIDs: [String]) -> Query {
        "SELECT import_id FROM transactions WHERE import_id = ANY(\(importIDs)::text[])"
    }

    /// The categories with one of `ids` (name NULL), and those whose title equals one of `names` ignoring
    /// case, with the name as the statement wrote it.
    static func categories(ids: [Int64], names: [String]) -> Query {
        """
        SELECT id, NULL::text FROM categories WHERE id = ANY(\(ids)::bigint[])
        UNION ALL
        SELECT c.id, n.name FROM unnest(\(names)::text[]) AS n (name) JOIN categories c ON lower(c.title) = lower(n.name)
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
