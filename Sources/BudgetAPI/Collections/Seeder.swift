import BudgetCore
import Postgres

/// Loads a json-server db.json into the database, all of it or nothing (docs/configuration.md, seed).
///
/// Blocking: every call runs libpq on the caller's thread, so call it from a command's main thread or
/// inside `Database.transaction`, never directly on Swift's cooperative pool.
public enum Seeder {
    /// Records sent to PostgreSQL per statement: large seeds need few round trips, and no statement grows huge.
    static let batchSize = 1000

    /// True when the ledger has no typed record and no generic collection: `serve --seed` loads only then.
    public static func isDatabaseEmpty(_ connection: Connection, ledger: LedgerID) throws -> Bool {
        try connection.query(SeedQueries.isEmpty(ledger))[0].decode(Bool.self, at: 0)
    }

    /// Parses and loads a db.json file's bytes into the ledger; a non-empty ledger is left alone unless
    /// `replacing`, which replaces that ledger's data alone. `clock` says what today is for a transaction
    /// without a `date` (`--time-zone`).
    @discardableResult
    public static func load(
        _ bytes: [UInt8], into connection: Connection, ledger: LedgerID, replacing: Bool = false, clock: CivilClock = CivilClock()
    ) throws -> SeedSummary {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw SeedError.invalid([.init(path: SeedPath.root, message: "not valid JSON: \(error)")])
        }
        return try load(document, into: connection, ledger: ledger, replacing: replacing, clock: clock)
    }

    /// Loads a parsed db.json document in one transaction (a savepoint when the caller has one open).
    @discardableResult
    static func load(
        _ document: JSONValue, into connection: Connection, ledger: LedgerID, replacing: Bool, clock: CivilClock
    ) throws -> SeedSummary {
        let plan = try SeedPlan(document, context: RecordContext(clock: clock, ledger: ledger))
        return try connection.transaction { connection in
            if replacing {
                for statement in SeedQueries.wipe(ledger) { try connection.execute(statement) }
            } else if try !isDatabaseEmpty(connection, ledger: ledger) {
                throw SeedError.databaseNotEmpty
            }
            try write(plan, ledger: ledger, on: connection)
            return SeedSummary(plan)
        }
    }

    private static func write(_ plan: SeedPlan, ledger: LedgerID, on connection: Connection) throws {
        // In `TypedResources.all` order, whatever the file's: a transaction needs its category.
        for resource in plan.typed {
            for record in resource.inserts { try insert(record.query, at: record.path, on: connection) }
        }
        for collection in plan.collections {
            try connection.execute(DocumentQueries.define(collection.name, kind: collection.kind, nextID: collection.nextID, in: ledger))
            var start = 0
            while start < collection.records.count {
                let batch = collection.records[start..<min(start + batchSize, collection.records.count)]
                try connection.execute(
                    SeedQueries.insert(
                        keys: batch.map(\.key),
                        bodies: batch.map { JSONWriter.string(.object($0.body)) },
                        into: collection.name,
                        ledger: ledger
                    ))
                start += batchSize
            }
        }
    }

    /// Runs one typed insert; a constraint it breaks becomes an issue at the record's path.
    private static func insert(_ query: Query, at path: String, on connection: Connection) throws {
        do {
            try connection.execute(query)
        } catch let error as PostgresError {
            // The API's own reading of the constraint (409 title, 422 categoryId, …) names the field.
            guard let meaning = APIError(translating: error), !error.isConnectionProblem else { throw error }
            let issues = meaning.problem.errors.map { SeedError.Issue(path: SeedPath.member(path, $0.field), message: $0.message) }
            throw SeedError.invalid(issues.isEmpty ? [.init(path: path, message: meaning.problem.detail ?? "rejected")] : issues)
        }
    }
}
