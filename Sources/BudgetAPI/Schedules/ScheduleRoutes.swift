import BudgetCore
import HTTPServer
import Postgres

/// Scheduled transactions as a typed resource: `/schedules`, `/schedules/:id` and `/schedules/upcoming`
/// (issue #31; the dates follow migrations/0019's functions, the posting `SchedulePoster`).
struct Schedules: TypedResource {
    static let collection = "schedules"
    static let recordName = "schedule"
    static let members = ScheduleRecord.members
    /// What Swift cannot check on a body alone, or a PATCH meets (migrations/0019).
    static let constraints: [ResourceConstraint] = [
        .foreignKey("schedules_account_id_fkey", field: "accountId", references: Accounts.self),
        .foreignKey("schedules_category_id_fkey", field: "categoryId", references: Categories.self),
        // The trigger names the part, e.g. splits[1].categoryId.
        .foreignKey("schedules_part_category_id_fkey", field: "splits", references: Categories.self, namesColumn: true),
        .check("schedules_end_after_first", field: "endDate", message: "must be on or after firstDate"),
        .check("schedules_account_or_category", field: "categoryId", message: "is required unless the schedule has an accountId or splits"),
        .check(
            "schedules_category_or_splits", field: "categoryId",
            message: "must be null on a schedule with splits: send splits: null with a categoryId to undo them"),
        .check(
            "schedules_splits_add_up", field: "splits",
            message: "the parts must add up to the amount exactly: send amount and splits together to change both"),
    ]

    static func fields(from members: JSONObject, mode: WriteMode, fieldPrefix: String) throws -> ScheduleFields {
        try ScheduleFields(members, mode: mode, fieldPrefix: fieldPrefix)
    }

    static func id(of fields: ScheduleFields) -> Int64? { fields.id }

    static func seedInsert(_ record: SeedRecord<ScheduleFields>, context: RecordContext) -> Query {
        ScheduleQueries.seedInsert(record, today: context.clock.today, in: context.ledger)
    }

    /// The collection and its records, and the occurrences to come.
    static func register(in router: inout Router<Database>, clock: CivilClock) {
        RecordRoutes<Schedules>(clock: clock).register(in: &router)
        UpcomingRoute(clock: clock).register(in: &router)
    }
}

/// `GET /schedules/upcoming?days=N`: the occurrences of the ledger's schedules not yet posted (nor, for a
/// schedule posted by hand, let pass), dated up to N days after today, by date then schedule, as
/// `[{scheduleId, date, title, amount}]`; one statement.
struct UpcomingRoute: Sendable {
    let clock: CivilClock

    static let path = "/schedules/upcoming"
    static let defaultDays: Int32 = 30
    static let days: ClosedRange<Int32> = 1...366

    func register(in router: inout Router<Database>) {
        router.get(Self.path) { request, database in try await upcoming(request, database: database) }
    }

    func upcoming(_ request: Request, database: Database) async throws -> Response {
        var days = Self.defaultDays
        if let text = request.queryValue("days") {
            guard let value = Int32(text), Self.days.contains(value) else {
                throw APIError.invalidParameter(
                    "days", "must be a whole number of days from \(Self.days.lowerBound) to \(Self.days.upperBound); it was '\(text)'")
            }
            days = value
        }
        let result = try await database.query(ScheduleQueries.upcoming(days: days, today: clock.today, in: database.ledger))
        var response = Response.json(ScheduleQueries.occurrence.jsonArray(result, from: 0))
        response.syncSeq = try result[0].decode(Int64.self, at: ScheduleQueries.upcomingPositionColumn)
        return response
    }
}
