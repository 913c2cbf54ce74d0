@testable import BudgetAPI
import HTTPServer

// JSON request bodies: the parser and writer round trip, then the validation a POST, PUT or PATCH of a
// category, an account, a transaction or a budget runs, on the same bytes sent as `application/json`.

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    let value = JSONBodyTarget.checkRoundTrip(bytes)
    JSONBodyTarget.checkValidation(bytes, parsed: value)
    return 0
}

enum JSONBodyTarget {
    /// Parses `bytes`; what parses is written back and must parse to the same value and the same text again.
    static func checkRoundTrip(_ bytes: [UInt8]) -> JSONValue? {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            invariant((0...bytes.count).contains(error.offset), "failure offset \(error.offset) in \(bytes.count) bytes")
            return nil
        }
        let written = JSONWriter.bytes(value)
        let again: JSONValue
        do {
            again = try JSONParser.parse(written)
        } catch {
            fatalError("written JSON does not parse (\(error)): \(String(decoding: written, as: UTF8.self).debugDescription)")
        }
        invariant(again == value, "written JSON parses to another value: \(String(decoding: written, as: UTF8.self).debugDescription)")
        invariant(JSONWriter.bytes(again) == written, "writing is not stable")
        return value
    }

    static func checkValidation(_ bytes: [UInt8], parsed: JSONValue?) {
        let request = Request(method: .post, target: "/transactions", headers: ["Content-Type": "application/json"], body: bytes)
        let records: [JSONObject], isArray: Bool
        do {
            (records, isArray) = try RequestBody.objects(request)
        } catch {
            expectRefusal(error, "RequestBody.objects", parsed: parsed)
            return
        }
        invariant(parsed != nil, "RequestBody accepted a body JSONParser refuses")
        invariant(parsed.map { !holdsNUL($0) } ?? true, "RequestBody accepted a body holding U+0000, which PostgreSQL cannot store")
        for (index, members) in records.enumerated() {
            let prefix = isArray ? "[\(index)]." : ""
            for mode in [WriteMode.complete, .partial, .seed] {
                checkCategory(members, mode: mode, prefix: prefix)
                checkAccount(members, mode: mode, prefix: prefix)
                checkTransaction(members, mode: mode, prefix: prefix, categoryFromPath: nil)
                checkTransaction(members, mode: mode, prefix: prefix, categoryFromPath: 7)
                checkBudget(members, mode: mode, prefix: prefix, monthFromPath: nil)
                checkBudget(members, mode: mode, prefix: prefix, monthFromPath: Month("2026-11"))
                checkSchedule(members, mode: mode, prefix: prefix)
            }
        }

        // A PATCH takes one object, as JSON or merge-patch; a wrong media type is 415 whatever the body.
        var patch = request
        patch.contentType = RequestBody.mergePatch
        do {
            let object = try RequestBody.object(patch, accepting: [RequestBody.json, RequestBody.mergePatch])
            invariant(!isArray && records.count == 1 && records[0] == object, "the object body differs from objects()")
        } catch {
            expectRefusal(error, "RequestBody.object", parsed: parsed)
        }
        var plain = request
        plain.contentType = "text/plain"
        do {
            _ = try RequestBody.object(plain)
            fatalError("text/plain was accepted as JSON")
        } catch {
            expect(error, "RequestBody.object") { if case .unsupportedMediaType = $0 { true } else { false } }
        }
    }

    private static func checkCategory(_ members: JSONObject, mode: WriteMode, prefix: String) {
        let fields: CategoryFields
        do {
            fields = try CategoryFields(members, mode: mode, fieldPrefix: prefix)
        } catch {
            expectInvalidFields(error, prefix: prefix, members: members, known: CategoryFields.known.union(CategoryFields.readOnly))
            return
        }
        checkAccepted(members, known: CategoryFields.known, readOnly: CategoryFields.readOnly)
        if mode == .complete { invariant(fields.title != nil && fields.amount != nil, "a complete category without title or amount") }
        invariant(fields.title.map { (1...100).contains($0.unicodeScalars.count) } ?? true, "category title \(String(describing: fields.title))")
        invariant(fields.amount.map { $0.cents >= 0 } ?? true, "negative category amount \(String(describing: fields.amount))")
        checkPresent(members, ["id": fields.id != nil, "title": fields.title != nil, "amount": fields.amount != nil])
        checkCommon(id: fields.id, title: fields.title, amount: fields.amount, members: members)
    }

    private static func checkTransaction(_ members: JSONObject, mode: WriteMode, prefix: String, categoryFromPath: Int64?) {
        let fields: TransactionFields
        do {
            fields = try TransactionFields(members, mode: mode, categoryIDFromPath: categoryFromPath, fieldPrefix: prefix)
        } catch {
            expectInvalidFields(error, prefix: prefix, members: members, known: TransactionFields.known.union(TransactionFields.readOnly))
            return
        }
        checkAccepted(members, known: TransactionFields.known, readOnly: TransactionFields.readOnly)
        if mode.isComplete {
            // A transaction in an account may leave its category out (docs/accounts.md).
            invariant(
                (fields.categoryID != nil || fields.accountID != nil) && fields.title != nil && fields.amount != nil,
                "a complete transaction without its required fields")
        }
        invariant(fields.cleared.map(TransactionFields.clearedStates.contains) ?? true, "cleared \(String(describing: fields.cleared))")
        invariant(mode == .seed || fields.transferID == nil, "transferId was taken outside a seed")
        if let categoryFromPath { invariant(fields.categoryID == categoryFromPath, "the path's category did not win") }
        invariant(fields.title.map { (1...200).contains($0.unicodeScalars.count) } ?? true, "transaction title \(String(describing: fields.title))")
        invariant(fields.date.map { CalendarDay($0) != nil } ?? true, "transaction date \(String(describing: fields.date))")
        switch fields.note {
        case .none: invariant(members["note"] == nil, "a note was dropped")
        case .some(.none): invariant(members["note"] == .null, "a note was cleared without null")
        case .some(.some(let text)): invariant(text.unicodeScalars.count <= 2000 && members["note"] == .string(text), "note \(text.debugDescription)")
        }
        var present = ["id": fields.id != nil, "title": fields.title != nil, "amount": fields.amount != nil, "date": fields.date != nil]
        if categoryFromPath == nil { present["categoryId"] = fields.categoryID != nil }
        checkPresent(members, present)
        checkCommon(id: fields.id, title: fields.title, amount: fields.amount, members: members)
    }

    private static func checkAccount(_ members: JSONObject, mode: WriteMode, prefix: String) {
        let fields: AccountFields
        do {
            fields = try AccountFields(members, mode: mode, fieldPrefix: prefix)
        } catch {
            expectInvalidFields(error, prefix: prefix, members: members, known: AccountFields.known.union(AccountFields.readOnly))
            return
        }
        checkAccepted(members, known: AccountFields.known, readOnly: AccountFields.readOnly)
        if mode.isComplete { invariant(fields.name != nil && fields.type != nil, "a complete account without name or type") }
        invariant(fields.name.map { (1...100).contains($0.unicodeScalars.count) } ?? true, "account name \(String(describing: fields.name))")
        invariant(fields.type.map(AccountType.all.contains) ?? true, "account type \(String(describing: fields.type))")
        if let type = fields.type, fields.onBudget == nil {
            invariant(fields.isOnBudget == AccountType.onBudgetByDefault.contains(type), "onBudget's default for \(type)")
        }
        invariant(fields.openedOn.map { CalendarDay($0) != nil } ?? true, "openedOn \(String(describing: fields.openedOn))")
        invariant(mode == .seed || fields.lastReconciledAt == nil, "lastReconciledAt was taken outside a seed")
        checkPresent(members, ["id": fields.id != nil, "name": fields.name != nil, "type": fields.type != nil])
    }

    private static func checkBudget(_ members: JSONObject, mode: WriteMode, prefix: String, monthFromPath: Month?) {
        let categoryFromPath: Int64? = monthFromPath == nil ? nil : 7
        let fields: BudgetFields
        do {
            fields = try BudgetFields(
                members, mode: mode, categoryIDFromPath: categoryFromPath, monthFromPath: monthFromPath, fieldPrefix: prefix)
        } catch {
            expectInvalidFields(error, prefix: prefix, members: members, known: BudgetFields.known.union(BudgetFields.readOnly))
            return
        }
        checkAccepted(members, known: BudgetFields.known, readOnly: BudgetFields.readOnly)
        if mode == .complete {
            invariant(fields.categoryID != nil && fields.month != nil && fields.amount != nil, "a complete budget without its required fields")
        }
        if let monthFromPath {
            invariant(fields.month == monthFromPath && fields.categoryID == categoryFromPath, "the path's month and category did not win")
            invariant(fields.id == nil, "the month route took an id")
            invariant(members["month"].map { $0 == .string(monthFromPath.description) } ?? true, "a body month other than the path's was accepted")
        } else {
            invariant(fields.month.map { members["month"] == .string($0.description) } ?? true, "month \(String(describing: fields.month))")
        }
        invariant(fields.amount.map { $0.cents >= 0 } ?? true, "negative budget \(String(describing: fields.amount))")
        checkCommon(id: fields.id, title: nil, amount: fields.amount, members: members)
    }

    private static func checkSchedule(_ members: JSONObject, mode: WriteMode, prefix: String) {
        let fields: ScheduleFields
        do {
            fields = try ScheduleFields(members, mode: mode, fieldPrefix: prefix)
        } catch {
            expectInvalidFields(error, prefix: prefix, members: members, known: ScheduleFields.known.union(ScheduleFields.readOnly))
            return
        }
        checkAccepted(members, known: ScheduleFields.known, readOnly: ScheduleFields.readOnly)
        if mode.isComplete {
            invariant(fields.title != nil && fields.amount != nil && fields.frequency != nil, "a complete schedule without its required fields")
        }
        invariant(fields.frequency.map(ScheduleFrequency.all.contains) ?? true, "frequency \(String(describing: fields.frequency))")
        invariant(fields.firstDate.map { CalendarDay($0) != nil } ?? true, "firstDate \(String(describing: fields.firstDate))")
        if let first = fields.firstDate, case .some(.some(let end)) = fields.endDate { invariant(end >= first, "endDate \(end) before \(first)") }
        if case .some(.some(let parts)) = fields.splits {
            invariant((2...SchedulePart.maximumCount).contains(parts.count), "\(parts.count) parts accepted")
            invariant(parts.allSatisfy { $0.categoryID > 0 }, "a part without a category id")
            if let amount = fields.amount { invariant(parts.reduce(0) { $0 + $1.amount.cents } == amount.cents, "parts that do not add up") }
            invariant(fields.categoryID.map { $0 == nil } ?? true, "a categoryId beside splits")
        }
        checkPresent(members, ["id": fields.id != nil, "title": fields.title != nil, "frequency": fields.frequency != nil])
        checkCommon(id: fields.id, title: fields.title, amount: fields.amount, members: members)
    }

    /// Accepted fields hold what the body said, in range.
    private static func checkCommon(id: Int64?, title: String?, amount: Money?, members: JSONObject) {
        invariant(id.map { $0 > 0 } ?? true, "id \(String(describing: id))")
        invariant(title.map { members["title"] == .string($0) } ?? true, "the title differs from the body's")
        if let amount {
            invariant(abs(amount.cents) <= Money.maximumCents, "amount \(amount) out of range")
            // The canonical text reads back as the same amount.
            invariant((try? Money(parsing: amount.description)) == amount, "amount \(amount) does not read back")
        }
    }

    /// A body that passed validation names no unknown field.
    private static func checkAccepted(_ members: JSONObject, known: Set<String>, readOnly: Set<String>) {
        for name in members.names {
            invariant(known.contains(name) || readOnly.contains(name), "unknown field \(name.debugDescription) accepted")
        }
    }

    /// Nothing a valid body carries is silently dropped.
    private static func checkPresent(_ members: JSONObject, _ present: [String: Bool]) {
        for (name, isPresent) in present {
            invariant(isPresent == (members[name] != nil), "field \(name) given: \(members[name] != nil), read: \(isPresent)")
        }
    }

    /// Validation throws 422 naming fields within this record; every unknown member is among them.
    private static func expectInvalidFields(_ error: any Error, prefix: String, members: JSONObject, known: Set<String>) {
        guard let apiError = error as? APIError, case .invalidFields(let errors) = apiError else {
            fatalError("validation threw \(type(of: error)) \(error), not APIError.invalidFields")
        }
        invariant(!errors.isEmpty, "invalidFields without errors")
        // Bytes, not Characters: a member name may start with a combining mark that joins the prefix's ".".
        invariant(errors.allSatisfy { $0.field.utf8.starts(with: prefix.utf8) && !$0.message.isEmpty }, "field errors \(errors) for prefix \(prefix)")
        let named = Set(errors.map(\.field))
        for name in members.names where !known.contains(name) {
            invariant(named.contains(prefix + name), "unknown field \(name.debugDescription) not reported")
        }
        invariant(apiError.problem.status == .unprocessableContent, "invalid fields answered \(apiError.problem.status)")
    }

    /// A JSON body is refused as malformed (400) when it does not parse or is not the expected shape, and as
    /// invalid fields (422) exactly when it parses and holds U+0000 in a member name or string, which
    /// PostgreSQL's text and jsonb cannot store: then one error names where, never a 500 from the database.
    private static func expectRefusal(_ error: any Error, _ stage: String, parsed: JSONValue?) {
        guard let apiError = error as? APIError else { fatalError("\(stage) threw \(type(of: error)) \(error)") }
        let nul = parsed.map(holdsNUL) ?? false
        switch apiError {
        case .malformedBody:
            invariant(!nul, "\(stage): a body holding U+0000 was refused as malformed, not as an invalid field")
        case .invalidFields(let errors):
            invariant(nul, "\(stage): invalidFields \(errors) for a body \(parsed == nil ? "that does not parse" : "without U+0000")")
            invariant(errors.count == 1 && !errors[0].field.isEmpty && !errors[0].message.isEmpty, "\(stage): field errors \(errors)")
            invariant(apiError.problem.status == .unprocessableContent, "\(stage): U+0000 answered \(apiError.problem.status)")
        default:
            fatalError("\(stage) threw \(apiError)")
        }
    }

    /// Whether a member name or a string anywhere in `value` holds U+0000 (written here, not taken from
    /// `RequestBody`, so that the check does not repeat the code it checks).
    private static func holdsNUL(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): text.unicodeScalars.contains("\u{0}")
        case .array(let elements): elements.contains(where: holdsNUL)
        case .object(let members): members.contains { $0.name.unicodeScalars.contains("\u{0}") || holdsNUL($0.value) }
        case .null, .bool, .number: false
        }
    }

    private static func expect(_ error: any Error, _ stage: String, _ isExpected: (APIError) -> Bool) {
        guard let apiError = error as? APIError, isExpected(apiError) else {
            fatalError("\(stage) threw \(type(of: error)) \(error)")
        }
    }
}
