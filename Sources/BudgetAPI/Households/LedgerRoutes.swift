import HTTPServer
import Postgres

/// `/ledgers` and their members (docs/households.md). `Access` has already resolved `{L}` to a ledger the
/// caller may see (404 otherwise) with the caller's role in it, and refused viewers' and read tokens' writes.
struct LedgerRoutes: Sendable {
    let cache: AuthCache

    static let collection = "/ledgers"
    static let ledger = "/ledgers/:ledger"
    static let members = "/ledgers/:ledger/members"
    static let member = "/ledgers/:ledger/members/:userId"

    func register(in router: inout Router<Database>) {
        router.get(Self.collection) { _, database in try await list(database) }
        router.post(Self.collection) { request, database in try await create(request, database) }
        router.get(Self.ledger) { _, database in try await show(database) }
        router.patch(Self.ledger) { request, database in try await rename(request, database) }
        router.delete(Self.ledger) { _, database in try await delete(database) }
        router.get(Self.members) { _, database in try await listMembers(database) }
        router.put(Self.member) { request, database in try await putMember(request, database) }
        router.delete(Self.member) { request, database in try await removeMember(request, database) }
    }

    private func list(_ database: Database) async throws -> Response {
        guard let holder = database.caller.holder else {
            let one = try await database.query(HouseholdQueries.ledgerAsOwner(.first)).firstJSON() ?? []
            return .json(Array("[".utf8) + one + Array("]".utf8))
        }
        return .json(try await database.query(HouseholdQueries.ledgers(user: holder.userID, pin: holder.pin)).firstJSON() ?? Array("[]".utf8))
    }

    private func create(_ request: Request, _ database: Database) async throws -> Response {
        let holder = try AuthRoutes.user(database)
        let name = try Self.name(request)
        let ledger = try await database.transaction { connection in
            let id = LedgerID(try connection.query(HouseholdQueries.insertLedger(name: name)).first?.decode(Int64.self, at: 0) ?? 0)
            _ = try connection.query(HouseholdQueries.insertMembership(ledger: id, user: holder.userID, role: .owner))
            return id
        }
        cache.changed()
        var response = Response.json(
            try await database.query(HouseholdQueries.ledger(ledger, user: holder.userID)).firstJSON() ?? [], status: .created)
        response.headers.replaceOrAdd("Location", "\(Self.collection)/\(ledger)")
        return response
    }

    private func show(_ database: Database) async throws -> Response {
        try .json(await ledgerJSON(database))
    }

    private func ledgerJSON(_ database: Database) async throws -> [UInt8] {
        let query =
            database.caller.holder.map { HouseholdQueries.ledger(database.ledger, user: $0.userID) }
            ?? HouseholdQueries.ledgerAsOwner(database.ledger)
        guard let json = try await database.query(query).firstJSON() else { throw Access.noSuchLedger }
        return json
    }

    private func rename(_ request: Request, _ database: Database) async throws -> Response {
        _ = try AuthRoutes.user(database)
        let name = try Self.name(request)
        _ = try await database.query(HouseholdQueries.renameLedger(database.ledger, name: name))
        return try .json(await ledgerJSON(database))
    }

    private func delete(_ database: Database) async throws -> Response {
        _ = try AuthRoutes.user(database)
        try Self.requireOwner(database, "only an owner may delete this ledger")
        _ = try await database.query(HouseholdQueries.deleteLedger(database.ledger))
        cache.changed()
        return Response(status: .noContent)
    }

    private func listMembers(_ database: Database) async throws -> Response {
        .json(try await database.query(HouseholdQueries.members(database.ledger)).firstJSON() ?? Array("[]".utf8))
    }

    private func putMember(_ request: Request, _ database: Database) async throws -> Response {
        try Self.requireOwner(database, "only an owner may manage this ledger's members")
        _ = try AuthRoutes.user(database)
        let user = try Self.userID(request)
        let body = try RequestBody.object(request)
        guard let role = body["role"].flatMap(AuthRoutes.string).flatMap(MemberRole.init(rawValue:)) else {
            throw APIError.invalidFields([.init(field: "role", message: "must be owner, editor or viewer")])
        }
        guard try await database.query(HouseholdQueries.userExists(user)).count > 0 else {
            throw Problem(.notFound, detail: "no such user")
        }
        let ledger = database.ledger
        let isNew = try await database.transaction { connection in
            let isNew = try connection.query(HouseholdQueries.putMember(ledger, user: user, role: role)).first?.column(0) == "t"
            _ = try connection.query(HouseholdQueries.checkOwnersNow)
            return isNew
        }
        cache.changed()
        let json = try await database.query(HouseholdQueries.member(ledger, user: user)).firstJSON() ?? []
        return .json(json, status: isNew ? .created : .ok)
    }

    private func removeMember(_ request: Request, _ database: Database) async throws -> Response {
        let holder = try AuthRoutes.user(database)
        let user = try Self.userID(request)
        if user != holder.userID { try Self.requireOwner(database, "only an owner may remove another member") }
        let ledger = database.ledger
        let removed = try await database.transaction { connection in
            let removed = try connection.query(HouseholdQueries.deleteMember(ledger, user: user)).affectedRows
            _ = try connection.query(HouseholdQueries.checkOwnersNow)
            return removed
        }
        cache.changed()
        guard removed > 0 else { throw Problem(.notFound, detail: "no such member") }
        return Response(status: .noContent)
    }

    private static func requireOwner(_ database: Database, _ detail: String) throws {
        guard database.caller.role == .owner else { throw Problem(.forbidden, detail: detail) }
    }

    private static func userID(_ request: Request) throws -> Int64 {
        guard let text = request.parameters["userId"], let id = Int64(text), id > 0 else {
            throw Problem(.notFound, detail: "no such member")
        }
        return id
    }

    private static func name(_ request: Request) throws -> String {
        let body = try RequestBody.object(request)
        let name = body["name"].flatMap(AuthRoutes.string)
        if let message = Users.nameProblem(name) { throw APIError.invalidFields([.init(field: "name", message: message)]) }
        return name!
    }
}
