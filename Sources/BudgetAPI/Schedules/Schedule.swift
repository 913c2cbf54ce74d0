import BudgetCore
import HTTPServer
import Postgres

/// How often a schedule falls due (migrations/0019's `schedule_frequency`, whose SQL functions compute the dates).
enum ScheduleFrequency {
    static let all = [
        "once", "daily", "weekly", "everyOtherWeek", "twiceAMonth", "every4Weeks", "monthly", "everyOtherMonth", "every3Months",
        "every4Months", "twiceAYear", "yearly", "everyOtherYear",
    ]
}

/// One part of a split schedule as a request gave it: every occurrence posts one transaction part per part.
struct SchedulePart: Sendable, Equatable {
    var categoryID: Int64
    var amount: Money
    var note: String?

    /// The most parts a schedule may have, as a split transaction may.
    static let maximumCount = 100
    static let known: Set<String> = ["categoryId", "amount", "note"]

    /// The parts as the JSON the `splits` column stores, members in the order clients read them.
    static func storedJSON(_ parts: [SchedulePart]) -> String {
        JSONWriter.string(
            .array(
                parts.map { part in
                    .object([
                        "categoryId": .number(String(part.categoryID)), "amount": .number(part.amount.description),
                        "note": part.note.map { .string($0) } ?? .null,
                    ])
                }))
    }
}

/// The writable fields of a schedule as a request gave them; nil means the request left the field out.
struct ScheduleFields: Sendable {
    var id: Int64?
    var title: String?
    var amount: Money?
    /// Absent (`.none`), cleared (`.some(nil)`) or set, as `note`.
    var accountID: Int64??
    var categoryID: Int64??
    var splits: [SchedulePart]??
    var payee: String??
    var note: String??
    var frequency: String?
    /// `YYYY-MM-DD`; absent means today on create and replace.
    var firstDate: String?
    var endDate: String??
    /// Absent means false on create and replace.
    var autoPost: Bool?

    static let known = ScheduleRecord.shape.writableNames
    static let readOnly = ScheduleRecord.shape.readOnlyNames

    /// Validates one JSON object, reporting every invalid field at once (422).
    init(_ members: JSONObject, mode: WriteMode, fieldPrefix: String = "") throws {
        var reader = FieldReader(members, prefix: fieldPrefix)
        reader.rejectUnknown(known: Self.known, ignored: Self.readOnly)
        if mode.isComplete {
            reader.require("title")
            reader.require("amount")
            reader.require("frequency")
        }
        id = reader.id("id")
        title = reader.string("title", length: 1...200)
        amount = reader.money("amount")
        accountID = reader.nullable("accountId") { $0.id("accountId") }
        categoryID = reader.nullable("categoryId") { $0.id("categoryId") }
        splits = reader.nullable("splits") { Self.parts(&$0) }
        payee = reader.nullable("payee") { $0.string("payee", length: 1...200) }
        note = reader.nullable("note") { $0.string("note", length: 0...2000) }
        frequency = reader.oneOf("frequency", ScheduleFrequency.all)
        firstDate = reader.day("firstDate")
        endDate = reader.nullable("endDate") { $0.day("endDate") }
        autoPost = reader.bool("autoPost")

        let hasSplits = reader.has("splits") && !reader.isNull("splits")
        if hasSplits, reader.has("categoryId"), !reader.isNull("categoryId") {
            reader.fail("categoryId", "must be absent or null when the schedule has splits: each part names its category")
        }
        // What the schedule posts must count somewhere: in an account, a category or its parts' categories.
        if mode.isComplete, !hasSplits, !reader.has("categoryId") || reader.isNull("categoryId"),
            !reader.has("accountId") || reader.isNull("accountId")
        {
            reader.fail("categoryId", "is required unless the schedule has an accountId or splits")
        }
        if let amount, case .some(.some(let parts)) = splits {
            let total = parts.reduce(0) { $0 + $1.amount.cents }
            if total != amount.cents {
                let difference = Money(cents: total - amount.cents)
                reader.fail("splits", "the parts add up to \(Money(cents: total)), not the amount \(amount) (a difference of \(difference))")
            }
        }
        if let firstDate, case .some(.some(let endDate)) = endDate, endDate < firstDate {
            reader.fail("endDate", "must be on or after firstDate (\(firstDate))")
        }
        guard reader.errors.isEmpty else { throw APIError.invalidFields(reader.errors) }
    }

    /// `splits`: 2 to 100 parts, each `{categoryId, amount, note?}`; a bad part is named by its index,
    /// e.g. `splits[1].categoryId`.
    private static func parts(_ reader: inout FieldReader) -> [SchedulePart]? {
        guard let value = reader.value("splits") else { return nil }
        guard case .array(let values) = value else {
            reader.fail("splits", "must be an array of parts {categoryId, amount, note}")
            return nil
        }
        guard (2...SchedulePart.maximumCount).contains(values.count) else {
            reader.fail("splits", "must have 2 to \(SchedulePart.maximumCount) parts; it has \(values.count)")
            return nil
        }
        var parts: [SchedulePart] = []
        var isValid = true
        for (index, value) in values.enumerated() {
            let name = "splits[\(index)]"
            guard case .object(let members) = value else {
                reader.fail(name, "must be an object {categoryId, amount, note}")
                isValid = false
                continue
            }
            var part = reader.nested(members, prefix: "\(name).")
            part.rejectUnknown(known: SchedulePart.known, ignored: [])
            part.require("categoryId")
            part.require("amount")
            let categoryID = part.id("categoryId")
            let amount = part.money("amount")
            let note = part.nullable("note") { $0.string("note", length: 0...2000) }
            reader.take(part)
            if let categoryID, let amount, part.errors.isEmpty {
                parts.append(SchedulePart(categoryID: categoryID, amount: amount, note: note ?? nil))
            } else {
                isValid = false
            }
        }
        return isValid ? parts : nil
    }
}

/// The members of a schedule, declared once (see `RecordShape`); the SQL reads a schedule row `s`.
enum ScheduleRecord {
    /// The stored parts as the JSON array clients read, `[{categoryId, amount, note}]` in the order they were
    /// given, compact (`SQLFragments`), as `json`; NULL for a schedule without parts.
    static var splitsJSON: Query {
        let element = SQLFragments.jsonObject(
            columns: "(e.part ->> 'categoryId')::bigint AS \"categoryId\", (e.part ->> 'amount')::numeric(14,2) AS amount, e.part ->> 'note' AS note")
        return """
            CASE WHEN s.splits IS NOT NULL THEN (SELECT (\(SQLFragments.jsonArray(of: element, orderBy: "e.ordinal")))::json \
            FROM jsonb_array_elements(s.splits) WITH ORDINALITY AS e(part, ordinal)) END
            """
    }

    /// The parts as the `splits` column stores them (`SchedulePart.storedJSON`), NULL without parts.
    private static func storedSplits(_ fields: ScheduleFields) -> Query {
        switch fields.splits {
        case .some(.some(let parts)): "\(SchedulePart.storedJSON(parts))::jsonb"
        default: "NULL::jsonb"
        }
    }

    /// A schedule row `s`, each member declared once, in the JSON's order. What a create gives a member the
    /// body left out: no account, category, parts, payee, note or end, the first occurrence today, posted by
    /// hand. A PATCH's parts take the place of a category (a split has none); an amount or parts that no
    /// longer add up meet `schedules_splits_add_up`.
    static let members = RecordMembers<ScheduleFields>(
        recordName: "schedule", alias: "s",
        [
            .id,
            .stored("title", "title", .text, .value(\.title), isSearchable: true),
            .stored("amount", "amount", .money, .value(\.amount), isSearchable: true),
            .stored("accountId", "account_id", .integer, .nullable(\.accountID, cast: "bigint")),
            .stored(
                "categoryId", "category_id", .integer,
                ColumnWrite(
                    isGiven: { fields in
                        if fields.categoryID != nil { return true }
                        if case .some(.some) = fields.splits { return true }
                        return false
                    },
                    complete: { fields, _ in "\(fields.categoryID ?? nil)::bigint" },
                    patch: { fields in fields.categoryID.map { "\($0)::bigint" } ?? "NULL" },
                    isKeptWhenAbsent: false)),
            .stored(
                "splits", "splits", .json,
                ColumnWrite(
                    isGiven: { $0.splits != nil }, complete: { fields, _ in storedSplits(fields) }, patch: storedSplits,
                    isKeptWhenAbsent: false),
                sql: splitsJSON),
            .stored("payee", "payee", .text, .nullable(\.payee, cast: "text"), isSearchable: true),
            .stored("note", "note", .text, .nullable(\.note, cast: "text"), isSearchable: true),
            .stored("frequency", "frequency", .text, .value(\.frequency, cast: "text")),
            .stored("firstDate", "first_date", .date, .value(\.firstDate, cast: "date", default: .today)),
            .stored("endDate", "end_date", .date, .nullable(\.endDate, cast: "date")),
            // The first occurrence the poster has not handled: schedule_next_date(frequency, first_date, end_date,
            // posted_through), which a trigger keeps in the row (migrations/0019); NULL when none is left.
            .derived("nextDate", "s.next_date", .date),
            .stored("autoPost", "auto_post", .boolean, .value(\.autoPost, cast: "boolean", default: .sql("false"))),
            .createdAt,
            .updatedAt,
            .version,
        ])
    static var shape: RecordShape { members.shape }
}
