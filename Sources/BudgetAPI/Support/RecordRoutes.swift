import BudgetCore
import HTTPServer
import Postgres

/// The REST routes of one typed resource (docs/api.md): list, create (one or all-or-nothing many), read,
/// replace-or-create, merge, delete.
struct RecordRoutes<Resource: TypedResource>: Sendable {
    /// What today and this month are, for defaults and `month=current`.
    let clock: CivilClock

    /// What the resource's statements need from the session: its ledger, and the clock.
    func context(_ database: Database) -> RecordContext {
        RecordContext(clock: clock, ledger: database.ledger)
    }

    /// `/<collection>`, where the resource is listed and created.
    static var collectionPath: String { "/\(Resource.collection)" }

    func register(in router: inout Router<Database>) {
        let collection = Self.collectionPath
        let record = "\(collection)/:id"
        router.get(collection) { request, database in try await list(request, database: database) }
        router.post(collection) { request, database in
            try await create(request, database: database) { members, prefix in
                try Resource.fields(from: members, mode: .complete, fieldPrefix: prefix)
            }
        }
        router.get(record) { request, database in try await find(request, database: database) }
        router.put(record) { request, database in try await replace(request, database: database) }
        router.patch(record) { request, database in try await update(request, database: database) }
        router.delete(record) { request, database in try await delete(request, database: database) }
    }

    /// The records the query language picks (docs/json-server.md), in id order unless `_sort` says otherwise.
    func list(_ request: Request, database: Database) async throws -> Response {
        let list = try Resource.listAnswer(for: request, context: context(database), maxRows: database.streams.maxRows)
        return try await database.list(list.answer, from: list.source)
    }

    func find(_ request: Request, database: Database) async throws -> Response {
        let id = try recordID(request)
        guard let record = try await database.snapshotJSON(try Resource.find(id: id, for: request, context: context(database))) else {
            throw APIError.notFound(resource: Resource.recordName, id: id)
        }
        return .json(record)
    }

    /// Creates the records of an object or array body; an array is inserted all-or-nothing (docs/api.md), in
    /// one statement when its records allow (`insertedTogether`), else one by one in a transaction.
    func create(
        _ request: Request,
        database: Database,
        fields makeFields: (JSONObject, String) throws -> Resource.Fields
    ) async throws -> Response {
        let (objects, isArray) = try RequestBody.objects(request)
        var allFields: [Resource.Fields] = []
        var invalid: [Problem.FieldError] = []
        for (index, members) in objects.enumerated() {
            do {
                allFields.append(try makeFields(members, isArray ? "[\(index)]." : ""))
            } catch APIError.invalidFields(let errors) {
                invalid += errors
            }
        }
        for (index, fields) in allFields.enumerated() {
            if let problem = Self.idOutsideSharedSpace(Resource.id(of: fields), caller: database.caller, field: isArray ? "[\(index)].id" : "id") {
                invalid.append(problem)
            }
        }
        guard invalid.isEmpty else { throw APIError.invalidFields(invalid) }
        guard isArray else {
            try await refuseTakenKey(allFields[0], excluding: nil, database: database)
            let insert = Resource.insert(allFields[0], context: context(database))
            guard
                let record = try await namingMissingReferences(
                    allFields[0], database: database,
                    {
                        try await database.write(insert, rendering: Resource.shape.record)
                    })
            else {
                preconditionFailure("INSERT … RETURNING answered no row")
            }
            return Self.created(record)
        }
        if let records = try await insertedTogether(allFields, database: database) {
            return .json(JSONArray.joining(records.map(\.json)), status: .created)
        }
        let context = context(database)
        let records = try await database.transaction { [allFields] connection in
            try allFields.enumerated().map { index, fields in
                if let key = Resource.takenKey(fields, excluding: nil, in: context.ledger) { try key.refuse(connection.query(key.holder)) }
                if let missing = Resource.missingReferences(fields, in: context.ledger) {
                    try missing.refuse(connection.query(missing.query), prefix: "[\(index)].")
                }
                guard let record = try connection.write(Resource.insert(fields, context: context), rendering: Resource.shape.record) else {
                    preconditionFailure("INSERT … RETURNING answered no row")
                }
                return record
            }
        }
        return .json(JSONArray.joining(records.map(\.json)), status: .created)
    }

    /// An array body's records written by one INSERT (`TypedResource.insert(together:)`, the statement an atomic
    /// batch writes a run of creates with), a statement on its own: atomic without BEGIN and COMMIT, and one
    /// foreign key check, change capture and executor start-up for the whole array instead of one each
    /// (bench/README.md, "Array creates"). An array longer than one statement takes
    /// (`BatchRoute.maximumRunLength`) is several such INSERTs in one transaction: still a statement per
    /// thousand records rather than per record.
    ///
    /// nil when a record needs statements of its own (a key or a split's categories to look up first, a
    /// split's parts), inside a transaction (a refused statement would abort the caller's: a batch's or an
    /// idempotency key's), or when PostgreSQL refuses the INSERT (a missing category or owner, an id taken, a
    /// check), which would not say which record it refused: nothing was written, and `create` then writes the
    /// records one by one, so its answer names the record at fault as it always has.
    private func insertedTogether(_ allFields: [Resource.Fields], database: Database) async throws -> [WrittenRecord]? {
        guard !database.isInTransaction else { return nil }
        let context = context(database)
        let length = BatchRoute.maximumRunLength
        var statements: [Query] = []
        for start in stride(from: 0, to: allFields.count, by: length) {
            guard let statement = Resource.insert(together: allFields[start..<min(allFields.count, start + length)], context: context) else {
                return nil
            }
            statements.append(statement)
        }
        let records: [WrittenRecord]
        do {
            if statements.count == 1 {
                records = try WrittenRecord.rows(await database.query(statements[0]), rendering: Resource.shape.record)
            } else {
                records = try await database.transaction { [statements] connection in
                    try statements.flatMap { try WrittenRecord.rows(connection.query($0), rendering: Resource.shape.record) }
                }
            }
        } catch let error as PostgresError where error.kind == .server {
            return nil
        }
        guard records.count == allFields.count else {
            throw PostgresError(kind: .decoding, message: "an INSERT of \(allFields.count) rows answered \(records.count)")
        }
        return records
    }

    /// PUT: replaces the record, or creates it under the path's id so offline clients can push their records.
    func replace(_ request: Request, database: Database) async throws -> Response {
        let id = try recordID(request)
        let fields = try Resource.fields(from: try RequestBody.object(request), mode: .complete, fieldPrefix: "")
        try checkBodyID(Resource.id(of: fields), matches: id)
        if let problem = Self.idOutsideSharedSpace(id, caller: database.caller, field: "id") { throw APIError.invalidFields([problem]) }
        try await refuseTakenKey(fields, excluding: id, database: database)
        guard
            let record = try await namingMissingReferences(
                fields, database: database,
                {
                    try await database.write(Resource.replace(id: id, with: fields, context: context(database)), rendering: Resource.shape.record)
                })
        else {
            preconditionFailure("INSERT … ON CONFLICT … RETURNING answered no row")
        }
        return record.isCreated ? Self.created(record) : .json(record.json)
    }

    /// PATCH: a shallow merge of the fields given (application/json or RFC 7396 merge-patch).
    func update(_ request: Request, database: Database) async throws -> Response {
        let id = try recordID(request)
        let members = try RequestBody.object(request, accepting: [RequestBody.json, RequestBody.mergePatch])
        let fields = try Resource.fields(from: members, mode: .partial, fieldPrefix: "")
        try checkBodyID(Resource.id(of: fields), matches: id)
        try await refuseTakenKey(fields, excluding: id, database: database)
        guard
            let record = try await namingMissingReferences(
                fields, database: database,
                {
                    try await database.write(Resource.update(id: id, with: fields, in: database.ledger), rendering: Resource.shape.record)
                })
        else {
            throw APIError.notFound(resource: Resource.recordName, id: id)
        }
        return .json(record.json)
    }

    /// DELETE: answers the record as it was (json-server 0.17 answers 200 with it).
    func delete(_ request: Request, database: Database) async throws -> Response {
        let id = try recordID(request)
        guard let record = try await database.write(Resource.delete(id: id, in: database.ledger), rendering: Resource.shape.record) else {
            throw APIError.notFound(resource: Resource.recordName, id: id)
        }
        return .json(record.json)
    }

    /// A `201` for a record a write created, with `Location` pointing at it.
    static func created(_ record: WrittenRecord) -> Response {
        var response = Response.json(record.json, status: .created)
        response.headers.replaceOrAdd("Location", "/\(Resource.collection)/\(record.id)")
        return response
    }

    /// 409 with `Location` when another record holds a unique key the write would take (`TakenKey`); a write
    /// that races this check still meets the key's unique index, and its 409 then names no record.
    ///
    /// Inside a transaction (a batch), records the fields name that the ledger lacks (`MissingReferences`)
    /// are refused here too, by the member naming them: a failed write would abort the transaction before
    /// they could be looked up. On its own a write looks them up only when it fails (`namingMissingReferences`).
    private func refuseTakenKey(_ fields: Resource.Fields, excluding id: Int64?, database: Database) async throws {
        if database.isInTransaction, let missing = Resource.missingReferences(fields, in: database.ledger) {
            try missing.refuse(await database.query(missing.query))
        }
        guard let key = Resource.takenKey(fields, excluding: id, in: database.ledger) else { return }
        try key.refuse(await database.query(key.holder))
    }

    /// Runs `write`, a statement of its own; when a foreign key refuses it, names the member that holds the
    /// missing record (`MissingReferences`, e.g. `splits[1].categoryId`) instead of the key's generic field.
    /// Looking only after a failure keeps the lookup off the path of every write that succeeds.
    private func namingMissingReferences(
        _ fields: Resource.Fields, database: Database, _ write: () async throws -> WrittenRecord?
    ) async throws -> WrittenRecord? {
        do {
            return try await write()
        } catch let error as PostgresError where error.sqlState == SQLState.foreignKeyViolation && !database.isInTransaction {
            if let missing = Resource.missingReferences(fields, in: database.ledger) { try missing.refuse(await database.query(missing.query)) }
            throw error
        }
    }

    /// The largest id a user may choose on a server with users: every ledger's server-assigned ids come from one
    /// sequence per table, moved past any id a client chooses, so one ledger choosing ids near 2^63 would leave
    /// every other ledger without new ids. 2^53 − 1 is also the largest integer every JSON client reads exactly.
    /// Without users (and with the operator's `--api-token`) any positive id is taken, as before.
    static var largestChosenID: Int64 { (1 << 53) - 1 }

    static func idOutsideSharedSpace(_ id: Int64?, caller: Caller, field: String) -> Problem.FieldError? {
        guard let id, id > largestChosenID, case .user = caller else { return nil }
        return .init(field: field, message: "must be at most \(largestChosenID) on a server with users (docs/households.md)")
    }

    private func checkBodyID(_ bodyID: Int64?, matches id: Int64) throws {
        if let bodyID, bodyID != id {
            throw APIError.invalidFields([.init(field: "id", message: "must equal the id in the path (\(id))")])
        }
    }
}

extension RecordRoutes where Resource: CombinableInserts {
    /// `POST /<collection>`, as an atomic batch writes a run of its creates together.
    func combinableCreates() -> [RouteSignature: CombinableCreate] {
        [
            RouteSignature(.post, Self.collectionPath): combinableCreate { members, _ in
                try Resource.fields(from: members, mode: .complete, fieldPrefix: "")
            }
        ]
    }

    /// A create route's part in an atomic batch's combined writes: the row of a create whose body is one object
    /// that `makeFields` (the route's validation) accepts and that needs no statement before its write
    /// (`create` would send none: no `takenKey`, no `missingReferences`), and its answer, `create`'s.
    /// Anything else is left to the route, which answers it as it always does.
    func combinableCreate(fields makeFields: @escaping @Sendable (JSONObject, Request) throws -> Resource.Fields) -> CombinableCreate {
        CombinableCreate(
            row: { request, database in
                guard case .object(let members)? = try? RequestBody.parse(request), let fields = try? makeFields(members, request),
                    Self.idOutsideSharedSpace(Resource.id(of: fields), caller: database.caller, field: "id") == nil
                else { return nil }
                return Resource.combinableRow(fields, context: context(database)).map {
                    CombinableCreate.Row(values: $0, choosesID: Resource.id(of: fields) != nil)
                }
            },
            insert: Resource.insert(rows:),
            columns: 2 + Resource.shape.record.columnCount,
            answers: { result in try WrittenRecord.rows(result, rendering: Resource.shape.record).map(Self.created) })
    }
}

/// The positive integer id of a record path such as `/categories/12` (400 otherwise).
func recordID(_ request: Request, parameter: String = "id") throws -> Int64 {
    guard let text = request.parameters[parameter], let id = Int64(text), id > 0 else {
        throw APIError.malformedPath("'\(request.parameters[parameter] ?? "")' is not a record id; ids are positive integers")
    }
    return id
}

/// Builds a JSON array from the bytes of JSON values, without re-encoding them.
enum JSONArray {
    static func joining(_ elements: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(elements.reduce(2) { $0 + $1.count + 1 })
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += element
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }
}
